import { plainToInstance } from 'class-transformer';
import { IsString, validateSync } from 'class-validator';
import { describeValidationErrors } from './http-errors';

class Named {
  @IsString() name!: string;
}

const errorsOf = (body: object) => validateSync(plainToInstance(Named, body), { whitelist: true, forbidNonWhitelisted: true });

describe('describeValidationErrors', () => {
  it('Given a message that starts with its property, When described, Then the path replaces the name', () => {
    expect(describeValidationErrors(errorsOf({ name: 5 }))).toEqual(['name: must be a string']);
  });

  it.each(['(', '[', '*', '+', '?', '\\', '$', '^', 'c++', '(?<x>', 'a{1,', '.*'])(
    'Given an unknown property named %j (regex syntax), When described, Then it is named as written and nothing throws',
    (key) => {
      expect(describeValidationErrors(errorsOf({ name: 'x', [key]: 1 }))).toEqual([`${key}: property ${key} should not exist`]);
    },
  );
});
