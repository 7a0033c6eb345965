import { TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { ValidationArguments, getMetadataStorage } from 'class-validator';

type Dto = new () => object;
type Metadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/**
 * The plain data that `toPlain(plainToInstance(type, raw))` gives when class-validator (unknown fields refused) finds
 * nothing wrong with the instance, or null when this cannot vouch for it: the caller then runs class-transformer and
 * class-validator, whose errors name the field. One walk over the plain value instead of an instance tree and an error
 * object per field (most of a profile document's validation, the common case being a valid one).
 */
export type DtoPlain = (raw: object) => Record<string, unknown> | null;

interface Rule {
  validate: (value: unknown, args: ValidationArguments) => unknown;
  constraints: unknown[];
  each: boolean;
}

/** What a field's value must be: free data, or a nested DTO (one, a list of them, or a Map of them keyed by name). */
type Nested = { kind: 'one' | 'list' | 'map'; of: Compiled } | null;

interface Field {
  property: string;
  conditions: Array<(object: object, value: unknown) => boolean>;
  rules: Rule[];
  nested: Nested;
}

interface Compiled {
  name: string;
  fields: Map<string, Field>;
  /** The fields a new instance already holds (class fields defined as undefined), in their order: they come first. */
  order: string[];
}

/** Plain data from validated class instances: Maps become objects, undefined and class identity disappear. */
export function toPlain(value: unknown): unknown {
  if (value instanceof Map) return toPlain(Object.fromEntries(value));
  if (Array.isArray(value)) return value.map(toPlain);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toPlain(v);
    return out;
  }
  return value;
}

const compiled = new WeakMap<Dto, Compiled | null>();

/**
 * Null when the class (or a class it nests) uses anything but field rules, @IsOptional, and @ValidateNested with a
 * @Type: class-transformer strategies, @Expose, @Exclude, @Transform, async or conditional-on-groups rules, @IsDefined.
 */
export function dtoPlain(type: Dto): DtoPlain | null {
  const c = compile(type, new Set());
  if (c === null) return null;
  return (raw) => {
    const out = instance(c, raw);
    return out === FAIL ? null : (out as Record<string, unknown>);
  };
}

function compile(type: Dto, seen: Set<Dto>): Compiled | null {
  const known = compiled.get(type);
  if (known !== undefined) return known;
  if (seen.has(type)) return null;
  seen.add(type);
  const result = build(type, seen);
  compiled.set(type, result);
  return result;
}

function build(type: Dto, seen: Set<Dto>): Compiled | null {
  const s = defaultMetadataStorage;
  if (s.getStrategy(type) !== 'none' || s.getExposedMetadatas(type).length > 0 || s.getExcludedMetadatas(type).length > 0) return null;
  const storage = getMetadataStorage();
  const metadata: readonly Metadata[] = storage.getTargetValidationMetadatas(type, '', false, false, undefined);
  if (metadata.length === 0) return null;
  const fields = new Map<string, Field>();
  for (const m of metadata) {
    let field = fields.get(m.propertyName);
    if (field === undefined) fields.set(m.propertyName, (field = { property: m.propertyName, conditions: [], rules: [], nested: null }));
    if (m.validateIf) return null;
    if (m.type === 'whitelistValidation') continue;
    if (m.type === 'conditionalValidation') field.conditions.push(m.constraints[0] as Field['conditions'][number]);
    else if (m.type === 'nestedValidation') {
      const nested = nestedOf(type, m.propertyName, seen);
      if (nested === null) return null;
      field.nested = nested;
    } else if (m.type === 'customValidation' && m.constraintCls !== undefined) {
      for (const c of storage.getTargetValidatorConstraints(m.constraintCls)) {
        if (c.async) return null;
        const rule = c.instance as Rule;
        field.rules.push({ validate: rule.validate.bind(rule), constraints: m.constraints, each: m.each === true });
      }
    } else return null;
  }
  for (const f of fields.values()) {
    if (s.findTransformMetadatas(type, f.property, TransformationType.PLAIN_TO_CLASS).length > 0) return null;
    // A @Type without @ValidateNested would convert a value that nothing checks: left to class-transformer.
    if (f.nested === null && s.findTypeMetadata(type, f.property) !== undefined) return null;
  }
  return { name: type.name, fields, order: Object.keys(new type()) };
}

function nestedOf(type: Dto, property: string, seen: Set<Dto>): Nested {
  const meta = defaultMetadataStorage.findTypeMetadata(type, property);
  if (meta === undefined || meta.options?.discriminator !== undefined || meta.typeFunction === undefined) return null;
  const of = compile(meta.typeFunction() as Dto, seen);
  if (of === null) return null;
  const kind = meta.reflectedType === Map ? 'map' : meta.reflectedType === Array ? 'list' : 'one';
  return { kind, of };
}

const FAIL = Symbol('fail');

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** The value as class-transformer copies it where no @Type applies, then toPlain; FAIL where it might do otherwise. */
function free(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? FAIL : value;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return FAIL;
    const out: unknown[] = [];
    for (const v of value) {
      const x = free(v);
      if (x === FAIL) return FAIL;
      out.push(x);
    }
    return out;
  }
  if (!isPlainObject(value)) return FAIL;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // Keys named like Object.prototype's members are skipped by class-transformer.
    if (key in Object.prototype) return FAIL;
    const x = free(value[key]);
    if (x === FAIL) return FAIL;
    if (x !== undefined) out[key] = x;
  }
  return out;
}

/** A DTO's value checked by its rules and copied as the instance's plain form would be; FAIL where unsure or invalid. */
function instance(c: Compiled, raw: unknown): unknown {
  if (!isPlainObject(raw)) return FAIL;
  for (const key of Object.keys(raw)) if (!c.fields.has(key)) return FAIL;
  for (const f of c.fields.values()) {
    const value = raw[f.property];
    if (!f.conditions.every((holds) => holds(raw, value))) continue;
    for (const r of f.rules) if (!passes(c, f, r, raw, value)) return FAIL;
    // class-validator skips nested validation of an undefined value; class-transformer leaves it out.
    if (f.nested !== null && value !== undefined && !nestedShape(f.nested.kind, value)) return FAIL;
  }
  const out: Record<string, unknown> = {};
  const put = (key: string): boolean => {
    const value = raw[key];
    if (value === undefined) return true;
    const f = c.fields.get(key) as Field;
    const x = f.nested === null || value === null ? free(value) : nested(f.nested, value);
    if (x === FAIL) return false;
    if (x !== undefined) out[key] = x;
    return true;
  };
  for (const key of c.order) if (Object.prototype.hasOwnProperty.call(raw, key) && !put(key)) return FAIL;
  for (const key of Object.keys(raw)) if (!(key in out) && !c.order.includes(key) && !put(key)) return FAIL;
  return out;
}

function nestedShape(kind: 'one' | 'list' | 'map', value: unknown): boolean {
  return kind === 'list' ? Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype : isPlainObject(value);
}

function nested(n: NonNullable<Nested>, value: unknown): unknown {
  if (n.kind === 'one') return instance(n.of, value);
  if (n.kind === 'list') {
    const out: unknown[] = [];
    for (const v of value as unknown[]) {
      const x = instance(n.of, v);
      if (x === FAIL) return FAIL;
      out.push(x);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    // class-transformer skips keys that name a Map's own members (get, size, …).
    if (key in Map.prototype) return FAIL;
    const x = instance(n.of, v);
    if (x === FAIL) return FAIL;
    out[key] = x;
  }
  return out;
}

function passes(c: Compiled, f: Field, r: Rule, object: object, value: unknown): boolean {
  const args = { targetName: c.name, property: f.property, object, value, constraints: r.constraints };
  const values = r.each && Array.isArray(value) ? value : [value];
  for (const v of values) {
    const ok = r.validate(v, args);
    // A rule answering a promise is an async one: left to class-validator.
    if (!ok || (typeof ok === 'object' && typeof (ok as { then?: unknown }).then === 'function')) return false;
  }
  return true;
}
