import type { FastifyInstance, FastifyRequest } from 'fastify';
import { routeRefusal } from '../auth/principals.guard';
import { DomainError } from '../common/domain-error';
import type { ControllerRoute } from '../http/openapi';
import { SIGNALS } from './session.dto';
import { SessionStatus } from './session.status';
import { SessionsService } from './sessions.service';

type SignalRequest = FastifyRequest<{ Params: { id: string }; Body: unknown }>;

/** The route under the API prefix, in Fastify's form. */
const PATH = '/coding-sessions/:id/signals';

/** How the API description states it (src/http/openapi.ts): as the controller route it was, its body one of the signals. */
export function signalsRoute(prefix: string): ControllerRoute {
  return {
    operationId: 'SessionsController_signal',
    method: 'POST',
    url: `/${prefix}${PATH}`,
    body: null,
    query: null,
    params: null,
    bodyOneOf: Object.values(SIGNALS),
    bodyNote: null,
    sse: false,
  };
}

/**
 * POST …/coding-sessions/:id/signals, served by Fastify itself: every worker signals at each step of its work, and
 * Nest's pipeline for a guarded route with pipes (its router, guard and pipe layers, each awaited) was about an eighth
 * of a signal's CPU (bench/README.md, The signal path, profiled). What that pipeline did is done here, the same way: the authentication hook
 * has set the principal (from the credential alone); the guard's rule (routeRefusal) lets the user and a worker of
 * this session, alive, through; the service validates the body (parseSignal: a 400 naming the field) before anything
 * is journaled; an error thrown here reaches Fastify's error handler, which Nest sets to the global exception filter,
 * so every refusal is answered as any other route's.
 */
export function installSignalsRoute(fastify: FastifyInstance, prefix: string, sessions: SessionsService): void {
  const url = `/${prefix}${PATH}`;
  const route = `POST ${url}`;
  fastify.post(url, (request: SignalRequest): Promise<SessionStatus> => {
    const principal = request.principal;
    if (!principal) throw new DomainError('unauthorized', 'missing credential');
    const id = request.params.id;
    const refusal = routeRefusal(principal, { route, allowed: ['worker'], ownSession: () => id, sessions });
    if (refusal) throw refusal;
    return sessions.signal(id, request.body);
  });
}
