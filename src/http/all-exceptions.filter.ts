import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { DomainError } from '../common/domain-error';
import { JournalError } from '../journal/journal.port';
import { ErrorBody, ErrorStatuses, errorBody } from './http-errors';

const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_input',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
};

/** Maps every error to {statusCode, error, code, message}; unknown errors are logged and answered 500 without internals. */
export function toErrorBody(exception: unknown, logger: Logger, statuses: ErrorStatuses): ErrorBody {
  if (exception instanceof DomainError || exception instanceof JournalError) {
    const body = statuses.bodyOf(exception);
    if (body.statusCode >= 500) logger.error(exception.message, exception.stack);
    return body;
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const res = exception.getResponse();
    const raw = typeof res === 'string' ? res : (res as { message?: unknown }).message;
    const message = Array.isArray(raw) ? raw.join('; ') : String(raw ?? exception.message);
    return errorBody(status, CODE_BY_STATUS[status] ?? 'http_error', message);
  }
  const fastifyError = exception as { statusCode?: number; code?: string; message?: string };
  if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    const status = fastifyError.statusCode;
    return errorBody(status, CODE_BY_STATUS[status] ?? 'http_error', fastifyError.message ?? 'bad request');
  }
  logger.error(`unhandled error: ${(exception as Error)?.message ?? String(exception)}`, (exception as Error)?.stack);
  return errorBody(500, 'internal_error', 'internal error (see the service log)');
}

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  constructor(private readonly statuses: ErrorStatuses) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const body = toErrorBody(exception, this.logger, this.statuses);
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.end();
      return;
    }
    void reply.status(body.statusCode).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}
