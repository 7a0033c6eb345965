/** Objects merge deeply; arrays and scalars replace. Pure. */
export function mergePatch(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) out[key] = mergePatch(base[key], value);
  return out;
}

/**
 * JSON merge patch (RFC 7396): as `mergePatch`, but a null in the patch removes the key, so a client can take an
 * MCP server or a hook event out of a profile. Pure.
 */
export function jsonMergePatch(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = jsonMergePatch(out[key], value);
  }
  return out;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
