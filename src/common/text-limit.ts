import { IsNotEmpty, IsString, ValidateBy } from 'class-validator';

/**
 * The largest text a request or a tool call may carry (prompt, message, question, reason, query): 64 KiB of UTF-8.
 * Stated once, in bytes, by `@Text()`: the DTOs of requests and of tool calls check it, and the OpenAPI document and
 * the tools' JSON Schemas are translated from those DTOs (src/common/dto-schema.ts).
 */
export const MAX_TEXT_BYTES = 64 * 1024;

/** Whether a text fits MAX_TEXT_BYTES of UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD it is written as). */
export const fitsTextLimit = (text: string): boolean => Buffer.byteLength(text, 'utf8') <= MAX_TEXT_BYTES;

export const TEXT_LIMIT_MESSAGE = `must be at most ${MAX_TEXT_BYTES} bytes (64 KiB)`;

// Not IsByteLength: it measures through encodeURI, which throws on a lone surrogate (a 500).
export const Text = (): PropertyDecorator => (target, key) => {
  IsString()(target, key);
  ValidateBy(
    { name: 'fitsTextLimit', constraints: [MAX_TEXT_BYTES], validator: { validate: (v: unknown) => typeof v !== 'string' || fitsTextLimit(v) } },
    { message: `$property ${TEXT_LIMIT_MESSAGE}` },
  )(target, key);
};

/** Such a text that may not be empty. */
export const RequiredText = (): PropertyDecorator => (target, key) => {
  Text()(target, key);
  IsNotEmpty()(target, key);
};
