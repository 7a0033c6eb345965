import { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { ErrorStatuses } from '../http/http-errors';
import { isApiDescription } from '../http/openapi';
import { Credentials } from './credentials';
import { HostPolicy, hostAllowed, originAllowed } from './host-policy';
import { isLivenessCheck } from '../http/liveness';
import { Principal } from './principal';
import { NODE_CREDENTIAL_PREFIX, NodePeers } from '../cluster/node-peers.port';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook before any handler runs; null only when the hook refused the request. */
    principal: Principal | null;
  }
}

export interface AuthOptions {
  credentials: Credentials;
  policy: HostPolicy;
  /** BRAINSTEM_AUTH=off: a request without a credential acts as the user (loopback only, warned at start). */
  anonymousIsUser: boolean;
  /** Paths a GET or HEAD may fetch without a credential: the dashboard's static files, which hold no data. */
  publicPaths?: ReadonlySet<string>;
  statuses: ErrorStatuses;
  /** The other nodes sharing the journal, whose credentials are checked against the digests they keep there. */
  peers?: NodePeers;
}

/**
 * The one route whose credential is in its path: an action link from a notification (a phone's notification cannot
 * send a header). Its capability is checked here like any credential and makes an action principal, which the route
 * guard lets through to this route alone (src/notifications/notifications.controller.ts).
 */
export const ACTION_ROUTE = '/api/v1/notifications/actions/:capability';

/** The port the request came in on; null for an in-process request (inject), which has no socket. */
export function localPortOf(request: FastifyRequest): number | null {
  return request.socket?.localPort ?? null;
}

/**
 * Before routing reaches any handler (REST, /mcp, static files): the Host and Origin checks, then the
 * credential (the API description excepted: isApiDescription; and, when none is sent, the liveness check and the
 * dashboard's static files). Identity comes from the bearer token alone; what each principal may do is decided where it is
 * used (the route guard, the MCP endpoint).
 */
export function installAuth(fastify: FastifyInstance, options: AuthOptions): void {
  fastify.decorateRequest('principal', null);
  // A callback hook, not an async one: every request passes here, and all but another node's credential are judged at
  // once, without the two promises (each paying the request id's async hooks) an async hook costs every request.
  fastify.addHook('onRequest', (request, reply, done) => {
    const answer = (refusal: DomainError | null): void => {
      if (!refusal) return done();
      const body = options.statuses.bodyOf(refusal);
      if (refusal.code === 'unauthorized') reply.header('www-authenticate', 'Bearer');
      // Answered here: the request goes no further (done is not called).
      void reply.status(body.statusCode).send(body);
    };
    const checked = refuse(request, options);
    if (checked === NODE_CREDENTIAL) authenticateNode(request, options.peers).then(answer).catch(done);
    else answer(checked);
  });
}

function isPublic(request: FastifyRequest, paths: ReadonlySet<string> | undefined): boolean {
  if (!paths || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
  const query = request.url.indexOf('?');
  return paths.has(query < 0 ? request.url : request.url.slice(0, query));
}

/** refuse()'s answer for another node's credential, which is looked up in the database (authenticateNode). */
const NODE_CREDENTIAL = Symbol('node credential');

function refuse(request: FastifyRequest, options: AuthOptions): DomainError | null | typeof NODE_CREDENTIAL {
  const port = localPortOf(request);
  if (!hostAllowed(options.policy, request.headers.host, port)) {
    return new DomainError('host_not_allowed', `Host ${JSON.stringify(request.headers.host ?? '')} is not one this service answers to; add it to BRAINSTEM_ALLOWED_HOSTS if it is yours`);
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !originAllowed(options.policy, origin, port)) {
    return new DomainError('origin_not_allowed', `Origin ${JSON.stringify(origin)} may not call this service`);
  }
  // The API description states no secret; its page asks for the token to try a call (the Authorize button).
  if (isApiDescription(request.method, request.routeOptions.url)) return null;
  if (request.routeOptions.url === ACTION_ROUTE) {
    const capability = (request.params as Record<string, string | undefined>).capability ?? '';
    const principal = options.credentials.authenticateAction(capability);
    if (!principal) return new DomainError('unauthorized', 'this action link is not one this service made');
    request.principal = principal;
    return null;
  }
  const header = request.headers.authorization;
  if (header === undefined && (isLivenessCheck(request.method, request.routeOptions.url) || isPublic(request, options.publicPaths))) return null;
  if (header === undefined) {
    if (options.anonymousIsUser) {
      request.principal = { kind: 'user' };
      return null;
    }
    return new DomainError('unauthorized', 'missing credential: send Authorization: Bearer <token> (the user token is in the api-token file of the data directory)');
  }
  const token = header.startsWith('Bearer ') || header.startsWith('bearer ') ? header.slice(7).trim() : null;
  if (token?.startsWith(NODE_CREDENTIAL_PREFIX)) return NODE_CREDENTIAL;
  const principal = token ? options.credentials.authenticate(token) : null;
  if (!principal) return new DomainError('unauthorized', 'invalid credential: expected Authorization: Bearer <token>');
  request.principal = principal;
  return null;
}

/** The node a node credential proves, or a refusal: a node alone on its journal (no peers) knows none. */
async function authenticateNode(request: FastifyRequest, peers: NodePeers | undefined): Promise<DomainError | null> {
  const token = (request.headers.authorization ?? '').slice(7).trim();
  const node = peers ? await peers.authenticate(token) : null;
  if (node === null) return new DomainError('unauthorized', 'invalid credential: not the credential of a node sharing this journal');
  request.principal = { kind: 'node', node };
  return null;
}
