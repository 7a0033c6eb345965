import { TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { ValidationArguments, getMetadataStorage } from 'class-validator';

type Dto<T> = new () => T;
type Metadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** Whether a DTO instance passes every rule of its class, as class-validator would judge it with unknown fields refused. */
export type DtoCheck = (dto: object) => boolean;

const checks = new WeakMap<readonly Metadata[], DtoCheck | null>();

/**
 * The rules of a DTO class as one function, for the valid request, the common one: class-validator builds an error
 * object per field and class-transformer walks its own metadata even when nothing is wrong (together most of a signal's
 * validation). Null when the class uses anything but plain field rules (class-transformer decorators, nested or
 * conditional-on-groups validation, `each`, async rules, @IsDefined): such a class is validated by class-validator alone.
 * The check answers true only when class-validator would find nothing wrong (the same rule instances, called with the
 * same arguments, the same unknown-field rule); on false the caller validates with class-validator, whose errors name
 * the field. Kept per rule list: class-validator's memoised lookup (validation-metadata.ts) hands out a new list when a
 * rule is added.
 */
export function dtoCheck<T extends object>(type: Dto<T>): DtoCheck | null {
  const storage = getMetadataStorage();
  const metadata = storage.getTargetValidationMetadatas(type, '', false, false, undefined);
  let check = checks.get(metadata);
  if (check === undefined) checks.set(metadata, (check = compile(type, metadata)));
  return check;
}

interface FieldRule {
  validate: (value: unknown, args: ValidationArguments) => unknown;
  constraints: unknown[];
}

interface Field {
  property: string;
  /** @IsOptional and the like: the field's rules apply only when every condition holds. */
  conditions: Array<(object: object, value: unknown) => boolean>;
  rules: FieldRule[];
}

function compile(type: Dto<object>, metadata: readonly Metadata[]): DtoCheck | null {
  if (metadata.length === 0 || transformed(type, metadata)) return null;
  const storage = getMetadataStorage();
  const fields = new Map<string, Field>();
  for (const m of metadata) {
    let field = fields.get(m.propertyName);
    if (field === undefined) fields.set(m.propertyName, (field = { property: m.propertyName, conditions: [], rules: [] }));
    if (m.type === 'whitelistValidation') continue;
    if (m.type === 'conditionalValidation') {
      field.conditions.push(m.constraints[0] as Field['conditions'][number]);
      continue;
    }
    if (m.type !== 'customValidation' || m.each || m.validateIf || m.constraintCls === undefined) return null;
    for (const c of storage.getTargetValidatorConstraints(m.constraintCls)) {
      if (c.async) return null;
      const instance = c.instance as FieldRule;
      field.rules.push({ validate: instance.validate.bind(instance), constraints: m.constraints });
    }
  }
  const list = [...fields.values()];
  const targetName = type.name;
  return (dto) => {
    const values = dto as Record<string, unknown>;
    for (const key of Object.keys(dto)) if (!fields.has(key)) return false;
    for (const f of list) {
      const value = values[f.property];
      if (!f.conditions.every((holds) => holds(dto, value))) continue;
      for (const r of f.rules) {
        const ok = r.validate(value, { targetName, property: f.property, object: dto, value, constraints: r.constraints });
        // A rule answering a promise is an async one: left to class-validator.
        if (!ok || (typeof ok === 'object' && typeof (ok as { then?: unknown }).then === 'function')) return false;
      }
    }
    return true;
  };
}

/** Whether class-transformer would do more than copy the fields (a strategy, @Expose, @Exclude, @Type, @Transform). */
function transformed(type: Dto<object>, metadata: readonly Metadata[]): boolean {
  const s = defaultMetadataStorage;
  if (s.getStrategy(type) !== 'none' || s.getExposedMetadatas(type).length > 0 || s.getExcludedMetadatas(type).length > 0) return true;
  return metadata.some(
    (m) => s.findTypeMetadata(type, m.propertyName) !== undefined || s.findTransformMetadatas(type, m.propertyName, TransformationType.PLAIN_TO_CLASS).length > 0,
  );
}
