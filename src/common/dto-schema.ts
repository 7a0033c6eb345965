import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { ValidateBy, ValidationArguments, getMetadataStorage } from 'class-validator';

/** A JSON Schema (the OpenAPI 3.0 subset) of one value. */
export interface SchemaObject {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: SchemaObject;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  additionalProperties?: boolean | SchemaObject;
  nullable?: boolean;
  description?: string;
  $ref?: string;
  allOf?: SchemaObject[];
  oneOf?: SchemaObject[];
  /** JSON Schema (draft 7): a field that needs others beside it. */
  dependencies?: Record<string, string[]>;
}

/**
 * Which schema language: OpenAPI 3.0 (an optional field is nullable, nested DTOs are `$ref`s into the registry) or plain
 * JSON Schema for a tool's arguments (an optional field is only not required; nested DTOs are inlined).
 */
export type SchemaDialect = 'openapi' | 'json-schema';

type Dto = abstract new (...args: never[]) => object;

type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** Named schemas the DTOs refer to (nested classes), keyed by class name. */
export type SchemaRegistry = Map<string, SchemaObject>;

/** What a validator that is not a JSON Schema keyword means, for a reader of the schema. */
const CUSTOM_NOTES: Record<string, string> = {
  isEnvMap: 'variable names ([A-Za-z_][A-Za-z0-9_]*) mapped to strings',
  isStringRecord: 'an object whose values are strings',
};

/** The name of the validator of `@Requires(…)`. */
const REQUIRES = 'requires';

/** The field, when given, needs the named fields beside it (JSON Schema's `dependencies`). */
export const Requires = (...fields: string[]): PropertyDecorator =>
  ValidateBy(
    {
      name: REQUIRES,
      constraints: fields,
      validator: {
        validate: (value: unknown, args?: ValidationArguments) =>
          value === undefined || fields.every((f) => (args?.object as Record<string, unknown> | undefined)?.[f] !== undefined),
        defaultMessage: () => `$property: needs ${fields.join(', ')} beside it`,
      },
    },
  );

const DESCRIPTIONS = new WeakMap<object, Map<string, string>>();

/** What a field means, for a reader of the schema (an agent choosing a tool's arguments, a client reading OpenAPI). */
export const Describe =
  (text: string): PropertyDecorator =>
  (target, key) => {
    const own = DESCRIPTIONS.get(target) ?? new Map<string, string>();
    own.set(String(key), text);
    DESCRIPTIONS.set(target, own);
  };

function describedAs(type: Dto, key: string): string | undefined {
  for (let proto: object | null = type.prototype as object; proto; proto = Object.getPrototypeOf(proto) as object | null) {
    const text = DESCRIPTIONS.get(proto)?.get(key);
    if (text !== undefined) return text;
  }
  return undefined;
}

/**
 * The JSON Schema of a class-validator DTO, read from its validators: the DTO is the one place a field's rules are
 * stated, and this only translates them (type, enum, lengths, bounds, pattern, required, nested DTOs as $ref into
 * `registry`). Properties a class does not validate do not exist for the whitelisting pipe, so none are listed;
 * unknown fields are refused (additionalProperties: false).
 * Not class-validator-jsonschema: it converts each validator alone and merges them last-wins, so a field with two
 * @Matches loses one pattern, @Requires cannot reach the object's `dependencies`, and an optional $ref loses `nullable`.
 */
export function dtoSchema(type: Dto, registry: SchemaRegistry, dialect: SchemaDialect = 'openapi'): SchemaObject {
  const byKey = new Map<string, ValidationMetadata[]>();
  for (const meta of getMetadataStorage().getTargetValidationMetadatas(type as unknown as new () => object, '', true, false)) {
    byKey.set(meta.propertyName, [...(byKey.get(meta.propertyName) ?? []), meta]);
  }
  const properties: Record<string, SchemaObject> = {};
  const required: string[] = [];
  const dependencies: Record<string, string[]> = {};
  for (const [key, metas] of byKey) {
    properties[key] = propertySchema(type, key, metas, registry, dialect);
    if (!metas.some((m) => m.type === 'conditionalValidation')) required.push(key);
    const needs = metas.filter((m) => m.name === REQUIRES).flatMap((m) => m.constraints as string[]);
    if (needs.length > 0) dependencies[key] = needs;
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    // OpenAPI 3.0 has no such keyword: there the field's description says it (see propertySchema).
    ...(dialect === 'json-schema' && Object.keys(dependencies).length > 0 ? { dependencies } : {}),
    additionalProperties: false,
  };
}

/** A tool's arguments as a JSON Schema: the DTO that validates them, translated, with nothing to resolve. */
export function toolSchema(type: Dto): SchemaObject {
  return dtoSchema(type, new Map(), 'json-schema');
}

/** `$ref` to a DTO's schema, adding it (and what it nests) to the registry once. */
export function dtoRef(type: Dto, registry: SchemaRegistry): SchemaObject {
  if (!registry.has(type.name)) {
    registry.set(type.name, {});
    registry.set(type.name, dtoSchema(type, registry));
  }
  return { $ref: `#/components/schemas/${type.name}` };
}

function propertySchema(owner: Dto, key: string, metas: ValidationMetadata[], registry: SchemaRegistry, dialect: SchemaDialect): SchemaObject {
  const own: SchemaObject = {};
  const item: SchemaObject = {};
  const notes: string[] = [];
  for (const meta of metas) {
    const target = meta.each ? item : own;
    const c = meta.constraints ?? [];
    switch (meta.type === 'nestedValidation' ? 'nested' : meta.name) {
      case 'nested': {
        const nested = (defaultMetadataStorage.findTypeMetadata(owner, key)?.typeFunction() ?? null) as Dto | null;
        if (nested) Object.assign(meta.each ? item : own, dialect === 'openapi' ? dtoRef(nested, registry) : dtoSchema(nested, registry, dialect));
        break;
      }
      case 'isString':
        target.type = 'string';
        break;
      case 'isInt':
        target.type = 'integer';
        break;
      case 'isNumber':
        target.type = 'number';
        break;
      case 'isBoolean':
        target.type = 'boolean';
        break;
      case 'isArray':
        own.type = 'array';
        break;
      case 'isObject':
        own.type = 'object';
        break;
      case 'isIn':
        target.enum = [...(c[0] as unknown[])];
        break;
      case 'isNotEmpty':
        target.minLength = Math.max(target.minLength ?? 0, 1);
        break;
      case 'minLength':
        target.minLength = Math.max(target.minLength ?? 0, c[0] as number);
        break;
      case 'maxLength':
        target.maxLength = Math.min(target.maxLength ?? Infinity, c[0] as number);
        break;
      case 'min':
        target.minimum = c[0] as number;
        break;
      case 'max':
        target.maximum = c[0] as number;
        break;
      case 'arrayMinSize':
        own.minItems = c[0] as number;
        break;
      case 'arrayMaxSize':
        own.maxItems = c[0] as number;
        break;
      case 'matches':
        // Several patterns (a name that must not be blank and has no control characters): all must hold, noted.
        if (target.pattern === undefined) target.pattern = (c[0] as RegExp).source;
        else notes.push(`also matches /${(c[0] as RegExp).source}/`);
        break;
      case 'fitsTextLimit':
        // Characters are never more than UTF-8 bytes: a bound that holds for clients that count characters.
        target.maxLength = Math.min(target.maxLength ?? Infinity, c[0] as number);
        notes.push(`at most ${c[0] as number} bytes of UTF-8`);
        break;
      case REQUIRES:
        if (dialect === 'openapi') notes.push(`needs ${(c as string[]).join(', ')} beside it`);
        break;
      default:
        if (meta.name && CUSTOM_NOTES[meta.name]) {
          own.type = 'object';
          notes.push(CUSTOM_NOTES[meta.name]);
        }
    }
  }
  // A nested map (`@IsObject() @ValidateNested({each})`): each value is the nested DTO.
  if (own.type === 'object' && Object.keys(item).length > 0) return { type: 'object', additionalProperties: item };
  if (Object.keys(item).length > 0) own.items = item;
  if (own.type === 'array' && !own.items) own.items = {};
  const described = describedAs(owner, key);
  if (described !== undefined) notes.unshift(described);
  if (notes.length > 0) own.description = notes.join('; ');
  if (!metas.some((m) => m.name === 'isOptional') || dialect === 'json-schema') return own;
  // IsOptional lets null through too; a $ref takes no sibling keywords in OpenAPI 3.0.
  return own.$ref ? { allOf: [{ $ref: own.$ref }], nullable: true } : { ...own, nullable: true };
}
