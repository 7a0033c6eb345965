import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { describeValidationErrors } from './http-errors';

/**
 * class-transformer skips a field named like a member of Object.prototype (toString, constructor, …) without a
 * word, so the whitelist never sees it: refused here, as the whitelist refuses any other unknown field. JSON
 * bodies are refused such keys at any depth by their parser already; this is the check for queries.
 */
class StrictValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && metadata.metatype && this.toValidate(metadata)) {
      const hidden = Object.keys(value).filter((k) => k in Object.prototype);
      if (hidden.length > 0) throw new DomainError('invalid_input', hidden.map((k) => `${k}: property ${k} should not exist`).join('; '));
    }
    return super.transform(value, metadata);
  }
}

/** Whitelist and reject unknown fields; errors name the offending path. */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => new DomainError('invalid_input', describeValidationErrors(errors).join('; ')),
  });
}
