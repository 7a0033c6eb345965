import { plainToInstance } from 'class-transformer';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { validateSync } from 'class-validator';
import { DomainError } from './domain-error';
import { describeValidationErrors, parseDto } from './validation-errors';

class Named {
  @IsString() @MaxLength(3) name!: string;
  @IsOptional() @IsString() note?: string;
}

const errorsOf = (body: object) => validateSync(plainToInstance(Named, body), { whitelist: true, forbidNonWhitelisted: true });

describe('describeValidationErrors', () => {
  it('Given a message that starts with its property, When described, Then the path replaces the name', () => {
    expect(describeValidationErrors(errorsOf({ name: 5 }))).toEqual(['name: must be shorter than or equal to 3 characters', 'name: must be a string']);
  });

  it('Given a required field left out, When described, Then it is named as required, once', () => {
    expect(describeValidationErrors(errorsOf({}))).toEqual(['name: is required']);
  });

  it.each(['(', '[', '*', '+', '?', '\\', '$', '^', 'c++', '(?<x>', 'a{1,', '.*'])(
    'Given an unknown property named %j (regex syntax), When described, Then it is named as written and nothing throws',
    (key) => {
      expect(describeValidationErrors(errorsOf({ name: 'x', [key]: 1 }))).toEqual([`${key}: unknown field`]);
    },
  );
});

describe('parseDto', () => {
  it('Given a valid value, When parsed, Then it is an instance of the DTO with its fields', () => {
    const dto = parseDto(Named, { name: 'abc', note: 'n' });
    expect(dto).toBeInstanceOf(Named);
    expect(dto).toEqual({ name: 'abc', note: 'n' });
  });

  it.each([
    ['not an object', 'x', 'echo: arguments: must be a JSON object'],
    ['an array', [], 'echo: arguments: must be a JSON object'],
    ['every problem', { note: 5, extra: 1 }, 'echo: extra: unknown field; name: is required; note: must be a string'],
  ])('Given %s, When parsed, Then an invalid_input names what is wrong', (_case, value, message) => {
    expect(() => parseDto(Named, value, 'echo: ')).toThrow(new DomainError('invalid_input', message));
    expect(() => parseDto(Named, value)).toThrow(DomainError);
  });
});
