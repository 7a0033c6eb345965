import { CORE_SCHEMA, dump, load } from 'js-yaml';
import { MAX_PROFILE_YAML_BYTES, ProfileDoc } from './profile.schema';

/** Safe YAML for profiles: bounded size, depth, aliases and expanded size. Pure. */

const MAX_ALIASES = 100;
const MAX_DEPTH = 64;
/** Expanded node count at most: a billion-laughs document stays small on disk but not once expanded. */
const MAX_EXPANDED_NODES = 50_000;

export type YamlParse = { ok: true; value: unknown } | { ok: false; error: string };

export function parseProfileYaml(text: string): YamlParse {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_PROFILE_YAML_BYTES) return { ok: false, error: `document is ${bytes} bytes, over the limit of 256 KiB` };
  let value: unknown;
  try {
    value = load(text, { schema: CORE_SCHEMA, maxAliases: MAX_ALIASES, maxDepth: MAX_DEPTH });
  } catch (e) {
    return { ok: false, error: firstLine((e as Error).message) };
  }
  const problem = inspectTree(value);
  return problem ? { ok: false, error: problem } : { ok: true, value };
}

/**
 * Counts nodes as if aliases were expanded, stopping as soon as the bound is passed, and refuses `__proto__`
 * keys, which would replace an object's prototype when the document is copied into class instances.
 */
function inspectTree(root: unknown): string | null {
  let count = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (++count > MAX_EXPANDED_NODES) return `aliases expand beyond ${MAX_EXPANDED_NODES} nodes`;
    if (v === null || typeof v !== 'object') continue;
    if (Object.prototype.hasOwnProperty.call(v, '__proto__')) return 'the key __proto__ is not allowed';
    for (const child of Object.values(v)) stack.push(child);
  }
  return null;
}

function firstLine(message: string): string {
  return message.split('\n')[0];
}

/** The document as written to disk and exported; the same text imports back. */
export function dumpProfileYaml(doc: ProfileDoc): string {
  return dump(doc, { noRefs: true, lineWidth: 120 });
}
