import { IsString, ValidateBy } from 'class-validator';

/**
 * The largest text a request or a tool call may carry (prompt, message, question, reason, query): 64 KiB of UTF-8.
 * Stated once, in bytes: the DTOs check it with `@Text()`, the tools' JSON Schemas with `textSchema()` (the
 * `maxBytes` keyword the tool registry's validator knows), so the same text passes or fails both.
 */
export const MAX_TEXT_BYTES = 64 * 1024;

/** Whether a text fits MAX_TEXT_BYTES of UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD it is written as). */
export const fitsTextLimit = (text: string): boolean => Buffer.byteLength(text, 'utf8') <= MAX_TEXT_BYTES;

export const TEXT_LIMIT_MESSAGE = `must be at most ${MAX_TEXT_BYTES} bytes (64 KiB)`;

// Not IsByteLength: it measures through encodeURI, which throws on a lone surrogate (a 500).
export const Text = (): PropertyDecorator => (target, key) => {
  IsString()(target, key);
  ValidateBy({ name: 'fitsTextLimit', validator: { validate: (v: unknown) => typeof v !== 'string' || fitsTextLimit(v) } }, { message: `$property ${TEXT_LIMIT_MESSAGE}` })(
    target,
    key,
  );
};

/**
 * The JSON Schema of such a text for a tool: `maxBytes` is the limit; `maxLength` (characters, never fewer than bytes)
 * tells clients that know only the standard keywords a bound that holds.
 */
export const textSchema = (minLength = 1) => ({ type: 'string', minLength, maxLength: MAX_TEXT_BYTES, maxBytes: MAX_TEXT_BYTES }) as const;
