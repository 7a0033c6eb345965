import { Transform } from 'class-transformer';

/**
 * A query-string integer: only plain decimal digits become a number. Anything else ("", "0x10", "1e2", " 5") stays a
 * string, so IsInt refuses it by name; `@Type(() => Number)` would have read those as 0, 16 and 100.
 */
export const QueryInt = (): PropertyDecorator => Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value));
