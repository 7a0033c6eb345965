import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Logger } from '@nestjs/common';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { domainErrorBody, errorBody } from '../http/http-errors';
import { SessionsService } from '../sessions/sessions.service';
import { McpDeps, McpIdentity, createMcpServer } from './mcp-server.factory';

export const MCP_PATH = '/mcp';
/** Worker connections name their session here; the profile emitters inject it under the reserved server name. */
export const SESSION_HEADER = 'x-brainstem-session';

const logger = new Logger('mcp');

/** No header: the main brain. A header: that session's worker, which must exist. */
export function identify(header: string | string[] | undefined, sessions: SessionsService): McpIdentity {
  if (header === undefined) return { kind: 'main_brain' };
  const value = Array.isArray(header) ? header : [header];
  if (value.length !== 1 || !value[0].trim()) throw new DomainError('invalid_input', 'X-Brainstem-Session: must be one session id (cs_…)');
  try {
    const status = sessions.status(value[0].trim());
    return { kind: 'worker', session_id: status.id, alias: status.alias };
  } catch (e) {
    if (e instanceof DomainError && e.code === 'not_found') {
      throw new DomainError('not_found', `X-Brainstem-Session: no session ${value[0].trim()}; a worker connects with its own cs_ session id`);
    }
    throw e;
  }
}

/**
 * Streamable HTTP at /mcp, stateless: every POST gets a fresh Server and transport bound to the identity
 * its headers carry. Nothing is kept between requests, so a worker's identity can never leak into another
 * connection, restarts of the service lose nothing, and no MCP session map needs expiring. The cost is no
 * server-initiated stream, which none of our tools need: GET (that stream) and DELETE (ending a session) answer
 * 405, as the SDK's stateless pattern does; the SDK client then simply goes on without the stream.
 * Registered on Fastify directly (the MCP transport writes the raw response), after the bearer-token hook.
 */
export function installMcpEndpoint(fastify: FastifyInstance, sessions: SessionsService, deps: McpDeps): void {
  fastify.post(MCP_PATH, (request, reply) => handle(request, reply, sessions, deps));
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

async function handle(request: FastifyRequest, reply: FastifyReply, sessions: SessionsService, deps: McpDeps): Promise<void> {
  let identity: McpIdentity;
  try {
    identity = identify(request.headers[SESSION_HEADER], sessions);
  } catch (e) {
    const body = e instanceof DomainError ? domainErrorBody(e) : errorBody(500, 'internal_error', 'could not identify the MCP caller');
    await reply.status(body.statusCode).send(body);
    return;
  }
  reply.hijack();
  const server = createMcpServer(identity, deps);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
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
