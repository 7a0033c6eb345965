import { ValidationPipe } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { describeValidationErrors } from '../common/validation-errors';

/** Whitelist and reject unknown fields; errors name the offending path. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => new DomainError('invalid_input', describeValidationErrors(errors).join('; ')),
  });
}
