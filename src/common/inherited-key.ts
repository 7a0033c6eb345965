/**
 * The path of the first key named like a member of Object.prototype (`constructor`, `toString`, `__proto__`, …),
 * or null. class-transformer takes such keys for the object's own members: it drops them silently or throws, so data
 * keyed by them must be refused before it gets there. Iterative, so a deep value cannot overflow the stack.
 */
export function inheritedKeyPath(value: unknown): string | null {
  // Paths are spelled out only for a value that has such a key: most have none, and a path per key was most of the work.
  if (!hasInheritedKey(value)) return null;
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, at] = stack.pop() as [unknown, string];
    if (v === null || typeof v !== 'object') continue;
    for (const [key, child] of Object.entries(v)) {
      const path = Array.isArray(v) ? `${at}[${key}]` : at ? `${at}.${key}` : key;
      if (!Array.isArray(v) && isInherited(key)) return path;
      stack.push([child, path]);
    }
  }
  return null;
}

const isInherited = (key: string): boolean => Object.prototype.hasOwnProperty.call(Object.prototype, key);

/** Whether any object in the value has a key named like a member of Object.prototype (arrays' indexes are not keys). */
function hasInheritedKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const child of v) if (child !== null && typeof child === 'object') stack.push(child);
      continue;
    }
    for (const key of Object.keys(v)) {
      if (isInherited(key)) return true;
      const child = (v as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return false;
}

/** The refusal for such a key, worded the same wherever data arrives (bodies, queries, profile files). */
export function inheritedKeyProblem(value: unknown): string | null {
  const path = inheritedKeyPath(value);
  return path === null ? null : `${path}: this key name is not allowed (it names a built-in object member)`;
}
