import type { FastifyInstance } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import { pinoHttp } from 'pino-http';
import { runWithRequestId } from './request-context';

/** An action link's path holds its credential (a notification's capability): the log names the route, not the secret. */
const ACTION_LINK = /^(\/api\/v1\/notifications\/actions\/)[^/?#]+/;

export const loggedUrl = (url: string): string => url.replace(ACTION_LINK, '$1…');

/**
 * Every request answers with its id in X-Request-Id and is handled in its context (so the events it appends carry the
 * id); with a log, it is logged in one line once answered. Installed before the auth hook, so refused requests are too.
 */
export function installRequestLog(fastify: FastifyInstance, log: PinoLogger | null): void {
  const logRequest = log
    ? pinoHttp({
        logger: log,
        // Method, path and status only: headers carry credentials, bodies carry user text.
        serializers: {
          req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: loggedUrl(req.url) }),
          res: (res: { statusCode: number }) => ({ status: res.statusCode }),
        },
        customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
        customSuccessMessage: (req, res, ms) => `${req.method} ${loggedUrl(req.url ?? '')} ${res.statusCode} ${ms} ms`,
        customErrorMessage: (req, res) => `${req.method} ${loggedUrl(req.url ?? '')} ${res.statusCode} failed`,
      })
    : null;
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    request.raw.id = request.id;
    runWithRequestId(request.id, () => {
      logRequest?.(request.raw, reply.raw);
      done();
    });
  });
}
