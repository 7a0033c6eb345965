import { hash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** Keys that JSON.stringify would escape; every other key is written between plain quotes. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * Written directly rather than through JSON.stringify with a replacer: the replacer is a call from native code
 * into JavaScript for every value, which made this the costliest step of an append.
 */
function write(value: unknown, key: string, stack: object[]): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${key || '$'}: ${value} is not valid JSON`);
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return write(toJSON.call(value, key), key, stack);
      if (value instanceof Number || value instanceof String || value instanceof Boolean) return write(value.valueOf(), key, stack);
      if (stack.includes(value)) throw new TypeError(`${key || '$'}: a cycle is not valid JSON`);
      stack.push(value);
      let out: string;
      if (Array.isArray(value)) {
        out = '[';
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          out += (i === 0 ? '' : ',') + (item === undefined ? 'null' : write(item, String(i), stack));
        }
        out += ']';
      } else {
        out = '{';
        for (const k of Object.keys(value).sort()) {
          const item = (value as Record<string, unknown>)[k];
          if (item === undefined) continue;
          out += (out.length === 1 ? '' : ',') + (NEEDS_ESCAPE.test(k) ? JSON.stringify(k) : `"${k}"`) + ':' + write(item, k, stack);
        }
        out += '}';
      }
      stack.pop();
      return out;
    }
    default:
      throw new TypeError(`${key || '$'}: ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`} is not valid JSON`);
  }
}

/**
 * Deterministic JSON: object keys sorted (by UTF-16 code units), undefined properties dropped and toJSON
 * honoured, as JSON.stringify does. Throws on NaN, Infinity, bigint, functions, symbols and cycles.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '', []);
}

export function sha256(text: string): string {
  return hash('sha256', text);
}

/** hash = sha256(prev_hash + canonical event), the link of the chain. */
export function chainHash(prevHash: string, canonicalEvent: string): string {
  return hash('sha256', prevHash + canonicalEvent);
}
