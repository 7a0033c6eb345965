import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { DomainError } from './domain-error';
import { dtoCheck } from './dto-check';
import { inheritedKeyProblem } from './inherited-key';
import { memoizeValidationMetadata } from './validation-metadata';

// Every validation (the global ValidationPipe's, parseDto's) reads class-validator's rules: looked up once per class.
memoizeValidationMetadata();

/**
 * class-validator errors as readable lines, each naming its path: "tools.mcp_servers.x.type: must be one of stdio, http".
 * A missing field says it is required and an unknown one that it is unknown, instead of every rule the absent value breaks.
 */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((e) => {
    const path = parent ? (/^\d+$/.test(e.property) ? `${parent}[${e.property}]` : `${parent}.${e.property}`) : e.property;
    const constraints = e.constraints ?? {};
    if ('whitelistValidation' in constraints) return [`${path}: unknown field`];
    if (e.value === undefined && Object.keys(constraints).length > 0) return [`${path}: is required`];
    // class-validator starts its messages with the property name ("name must…", or ours "name: must…"): the path
    // replaces it. A string prefix, since a name is user text.
    const bare = (m: string) => (m.startsWith(`${e.property}: `) ? m.slice(e.property.length + 2) : m.startsWith(`${e.property} `) ? m.slice(e.property.length + 1) : m);
    const own = Object.values(constraints).map((m) => `${path}: ${bare(m)}`);
    return [...own, ...describeValidationErrors(e.children ?? [], path)];
  });
}

type Dto<T> = new () => T;

/**
 * A value held to a DTO's rules as a request body is (the global ValidationPipe's options: unknown fields refused),
 * for data that arrives other than as a request: a tool call, a signal, a request made in code.
 */
export function parseDto<T extends object>(type: Dto<T>, value: unknown, prefix = ''): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DomainError('invalid_input', `${prefix}arguments: must be a JSON object`);
  const inherited = inheritedKeyProblem(value);
  if (inherited !== null) throw new DomainError('invalid_input', prefix + inherited);
  // The valid value, the common case, checked without class-transformer and class-validator's error objects.
  const check = dtoCheck(type);
  if (check !== null) {
    const fast = Object.assign(new type(), value);
    if (check(fast)) return fast;
  }
  const dto = plainToInstance(type, value);
  // A DTO of no fields (a tool without arguments) is still a known shape: only its unknown fields are refused.
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  if (errors.length > 0) throw new DomainError('invalid_input', prefix + describeValidationErrors(errors).join('; '));
  return dto;
}
