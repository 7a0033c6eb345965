/**
 * How the loop detector tells two things apart: a call by its tool and its arguments in a canonical form, an output by
 * a digest that ignores what changes from one run to the next without meaning anything (times, durations, addresses),
 * and evidence cut to a size. Pure.
 */

/** JSON with object keys sorted at every depth: the same arguments in another key order are the same call. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/** A 64-bit FNV-1a digest of a text, as 16 hex digits: signatures are compared and journaled, not the texts. */
export function digest(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x01000193) ^ (h1 >>> 13);
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}

// Each of these changes between two runs of the same failing command without the failure being another one.
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?/g;
const CLOCK_TIME = /\b\d\d:\d\d:\d\d(?:\.\d+)?\b/g;
const DURATION = /\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|m|min)\b/g;
const HEX_ID = /\b(?:0x)?[0-9a-f]{8,}\b/gi;
const SPACE = /\s+/g;

/** An output as a failure is compared by: its times, durations and hex ids taken out, its spacing collapsed. */
export function outputDigest(output: string): string {
  return digest(output.replace(ISO_TIME, 'T').replace(CLOCK_TIME, 'T').replace(DURATION, 'D').replace(HEX_ID, 'H').replace(SPACE, ' ').trim());
}

/** A turn's text as turns are compared by: trimmed, its spacing collapsed. */
export function normalText(text: string): string {
  return text.replace(SPACE, ' ').trim();
}

/** The first `max` bytes of UTF-8 of a text, cut on a character boundary and marked when cut. */
export function clipBytes(text: string, max: number): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: short texts need no encoding to know they fit.
  if (text.length * 3 <= max) return text;
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= max) return text;
  const mark = '…';
  return buf.subarray(0, max - Buffer.byteLength(mark)).toString('utf8').replace(/\uFFFD$/, '') + mark;
}

/** The most of a tool's output a runtime reports as activity, in bytes of UTF-8. */
export const ACTIVITY_OUTPUT_MAX_BYTES = 8192;

/**
 * A tool's output as activity carries it: whole up to ACTIVITY_OUTPUT_MAX_BYTES, else its head and its tail (a test
 * runner prints its summary last, so two failures that differ only there still differ).
 */
export function clipOutput(output: string): string {
  if (output.length * 3 <= ACTIVITY_OUTPUT_MAX_BYTES) return output;
  const buf = Buffer.from(output, 'utf8');
  if (buf.length <= ACTIVITY_OUTPUT_MAX_BYTES) return output;
  const half = ACTIVITY_OUTPUT_MAX_BYTES / 2 - 8;
  const head = buf.subarray(0, half).toString('utf8').replace(/\uFFFD$/, '');
  const tail = buf.subarray(buf.length - half).toString('utf8').replace(/^\uFFFD/, '');
  return `${head}\n…\n${tail}`;
}
