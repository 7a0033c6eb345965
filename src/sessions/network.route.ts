import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routeRefusal } from '../auth/principals.guard';
import { describePrincipal } from '../auth/principal';
import { DomainError } from '../common/domain-error';
import type { ControllerRoute } from '../http/openapi';
import { NetworkAskDto, NetworkRefusalDto } from './session.dto';
import { NetworkAskAnswer } from './session-network';
import { SessionsService } from './sessions.service';

type NetworkRequest = FastifyRequest<{ Params: { id: string }; Body: unknown }>;

const ASKS = '/coding-sessions/:id/network-asks';
const REFUSALS = '/coding-sessions/:id/network-refusals';

/** How the API description states them (src/http/openapi.ts), as controller routes with their bodies. */
export function networkRoutes(prefix: string): ControllerRoute[] {
  const route = (operationId: string, path: string, body: new () => object): ControllerRoute => ({
    operationId,
    method: 'POST',
    url: `/${prefix}${path}`,
    body,
    query: null,
    params: null,
    bodyOneOf: null,
    bodyNote: null,
    sse: false,
  });
  return [route('SessionsController_networkAsk', ASKS, NetworkAskDto), route('SessionsController_networkRefusal', REFUSALS, NetworkRefusalDto)];
}

/**
 * A sandboxed worker's launcher (outside the sandbox, with the worker's credential BRAINSTEM_TOKEN) brings srt's asks and
 * refusals here. Served by Fastify itself, as the signals route is, so that the connection's close is seen: an ask is
 * held until it is decided (at most BRAINSTEM_SANDBOX_ASK_WAIT_S), and a launcher gone ends its wait. Only the worker
 * of that session, alive, may call them (the signals route's rule, without the user: an ask would hold the caller).
 */
export function installNetworkRoutes(fastify: FastifyInstance, prefix: string, sessions: SessionsService): void {
  const guarded = (path: string) => {
    const url = `/${prefix}${path}`;
    const route = `POST ${url}`;
    return (request: NetworkRequest): string => {
      const principal = request.principal;
      if (!principal) throw new DomainError('unauthorized', 'missing credential');
      const id = request.params.id;
      if (principal.kind !== 'worker') throw new DomainError('permission_denied', `${describePrincipal(principal)} may not call ${route}: only the session's worker (its sandbox launcher) does`);
      const refusal = routeRefusal(principal, { route, allowed: ['worker'], ownSession: () => id, sessions });
      if (refusal) throw refusal;
      return id;
    };
  };
  const asks = guarded(ASKS);
  fastify.post(`/${prefix}${ASKS}`, (request: NetworkRequest, reply: FastifyReply): Promise<NetworkAskAnswer> => {
    const id = asks(request);
    const gone = new AbortController();
    // The response closes before it is written only when the launcher went away.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    return sessions.network.ask(id, request.body, gone.signal);
  });
  const refusals = guarded(REFUSALS);
  fastify.post(`/${prefix}${REFUSALS}`, async (request: NetworkRequest): Promise<{ recorded: true }> => {
    await sessions.network.refused(refusals(request), request.body);
    return { recorded: true };
  });
}
