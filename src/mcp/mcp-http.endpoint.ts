import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Logger } from '@nestjs/common';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { localPortOf } from '../auth/auth.hook';
import { HostPolicy, allowedHostValues, allowedOriginValues } from '../auth/host-policy';
import { Principal, describePrincipal } from '../auth/principal';
import { DomainError } from '../common/domain-error';
import { ErrorStatuses, errorBody } from '../http/http-errors';
import { WorkerSessions } from '../auth/worker-sessions.port';
import { McpDeps, McpIdentity, createMcpServer } from './mcp-server.factory';

export const MCP_PATH = '/mcp';
/** Worker connections name their session here; the profile emitters inject it under the reserved server name. */
export const SESSION_HEADER = 'x-brainstem-session';

const logger = new Logger('mcp');

/**
 * Who the caller is, from its credential alone: a worker's credential is that session's worker (while the
 * session runs); the user's or the brain's is the main brain. The X-Brainstem-Session header is a hint that must
 * agree with the credential; it never makes anyone a worker.
 */
export function identify(principal: Principal, header: string | string[] | undefined, sessions: WorkerSessions): McpIdentity {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  if (values.length > 1 || (values.length === 1 && !values[0].trim())) throw new DomainError('invalid_input', 'X-Brainstem-Session: must be one session id (cs_…)');
  const hint = values.length === 1 ? values[0].trim() : undefined;
  if (principal.kind === 'action') throw new DomainError('permission_denied', `${describePrincipal(principal)} may not use /mcp`);
  // A claude hook reports over its own routes only: MCP is the brain's and the workers'.
  if (principal.kind === 'hook' || principal.kind === 'node') throw new DomainError('permission_denied', `${describePrincipal(principal)} may not use MCP`);
  if (principal.kind !== 'worker') {
    if (hint !== undefined) {
      throw new DomainError('permission_denied', `X-Brainstem-Session: ${describePrincipal(principal)} is not a worker; a worker connects with its own credential (BRAINSTEM_TOKEN)`);
    }
    return { kind: 'main_brain' };
  }
  const id = sessions.liveWorker(principal.session_id);
  if (!id) throw new DomainError('unauthorized', `worker credential refused: session ${principal.session_id} is not running (a worker's credential ends with its session)`);
  const own = sessions.find(id) as { id: string; alias: string };
  if (hint !== undefined && sessions.find(hint)?.id !== id) {
    throw new DomainError('permission_denied', `X-Brainstem-Session: ${hint} is not the session of your credential (${id})`);
  }
  return { kind: 'worker', session_id: id, alias: own.alias };
}

/** What the endpoint answers HTTP with: the host policy the SDK's own check repeats, and the status of each error code. */
export interface McpHttp {
  policy: HostPolicy;
  statuses: ErrorStatuses;
}

/**
 * Streamable HTTP at /mcp, stateless: every POST gets a fresh Server and transport bound to the identity
 * its headers carry. Nothing is kept between requests, so a worker's identity can never leak into another
 * connection, restarts of the service lose nothing, and no MCP session map needs expiring. The cost is no
 * server-initiated stream, which none of our tools need: GET (that stream) and DELETE (ending a session) answer
 * 405, as the SDK's stateless pattern does; the SDK client then simply goes on without the stream.
 * Registered on Fastify directly (the MCP transport writes the raw response), behind the authentication hook.
 */
export function installMcpEndpoint(fastify: FastifyInstance, sessions: WorkerSessions, deps: McpDeps, http: McpHttp): void {
  fastify.post(MCP_PATH, (request, reply) => handle(request, reply, sessions, deps, http));
  fastify.route({
    method: ['GET', 'DELETE'],
    url: MCP_PATH,
    handler: async (_request, reply) => {
      await reply
        .status(405)
        .header('allow', 'POST')
        .send({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send requests with POST' } });
    },
  });
}

async function handle(request: FastifyRequest, reply: FastifyReply, sessions: WorkerSessions, deps: McpDeps, { policy, statuses }: McpHttp): Promise<void> {
  let identity: McpIdentity;
  try {
    // The authentication hook has refused any request without a principal.
    identity = identify(request.principal as Principal, request.headers[SESSION_HEADER], sessions);
  } catch (e) {
    const body = e instanceof DomainError ? statuses.bodyOf(e) : errorBody(500, 'internal_error', 'could not identify the MCP caller');
    await reply.status(body.statusCode).send(body);
    return;
  }
  reply.hijack();
  const server = createMcpServer(identity, deps);
  const port = localPortOf(request);
  // The SDK's own DNS-rebinding check, behind ours (which also covers in-process requests, where no port is known).
  const rebinding =
    port === null
      ? {}
      : { enableDnsRebindingProtection: true, allowedHosts: allowedHostValues(policy, port), allowedOrigins: allowedOriginValues(policy, port) };
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, ...rebinding });
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  } catch (e) {
    logger.error(`MCP request failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'internal error' } }));
    }
  }
}
