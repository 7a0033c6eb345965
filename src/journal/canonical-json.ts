import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/**
 * Deterministic JSON: object keys sorted, undefined properties dropped (as JSON.stringify does).
 * Throws on values JSON cannot carry faithfully (NaN, Infinity, bigint, functions, cycles).
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set(), '$');
}

function write(value: unknown, seen: Set<object>, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${path}: ${value} is not valid JSON`);
      return JSON.stringify(value);
    case 'object': {
      if (seen.has(value)) throw new TypeError(`${path}: circular reference`);
      seen.add(value);
      let out: string;
      if (Array.isArray(value)) {
        out = '[' + value.map((v, i) => (v === undefined ? 'null' : write(v, seen, `${path}[${i}]`))).join(',') + ']';
      } else {
        const obj = value instanceof Date ? null : (value as Record<string, unknown>);
        if (obj === null) {
          out = JSON.stringify((value as Date).toISOString());
        } else {
          const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
          out = '{' + keys.map((k) => JSON.stringify(k) + ':' + write(obj[k], seen, `${path}.${k}`)).join(',') + '}';
        }
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new TypeError(`${path}: a ${typeof value} is not valid JSON`);
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** hash = sha256(prev_hash + canonical event), the link of the chain. */
export function chainHash(prevHash: string, canonicalEvent: string): string {
  return createHash('sha256').update(prevHash).update(canonicalEvent).digest('hex');
}
