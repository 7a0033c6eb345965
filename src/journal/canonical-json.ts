import { hash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** Rejects what JSON cannot carry faithfully and returns objects with their keys sorted. */
function canonicalReplacer(this: unknown, key: string, value: unknown): unknown {
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${key || '$'}: ${value} is not valid JSON`);
      return value;
    case 'function':
    case 'symbol':
      throw new TypeError(`${key || '$'}: a ${typeof value} is not valid JSON`);
    case 'object': {
      if (value === null || Array.isArray(value)) return value;
      const keys = Object.keys(value);
      let sorted = true;
      for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1] < keys[i];
      if (sorted) return value;
      const copy: Record<string, unknown> = {};
      for (const k of keys.sort()) copy[k] = (value as Record<string, unknown>)[k];
      return copy;
    }
    default:
      return value;
  }
}

/**
 * Deterministic JSON: object keys sorted (by UTF-16 code units), undefined properties dropped, as
 * JSON.stringify does. Throws on NaN, Infinity, bigint, functions, symbols and cycles. Native
 * JSON.stringify does the work; objects are copied only when their keys are not already in order.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) throw new TypeError('$: undefined is not valid JSON');
  return JSON.stringify(value, canonicalReplacer);
}

export function sha256(text: string): string {
  return hash('sha256', text);
}

/** hash = sha256(prev_hash + canonical event), the link of the chain. */
export function chainHash(prevHash: string, canonicalEvent: string): string {
  return hash('sha256', prevHash + canonicalEvent);
}
