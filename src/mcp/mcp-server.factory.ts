import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestParamsSchema,
  CallToolRequestSchema,
  CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  GetPromptResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Logger } from '@nestjs/common';
import * as z from 'zod/v4';
import { DomainError } from '../common/domain-error';
import { ToolAudience, ToolRegistry } from '../main-brain/tool-registry';
import { SupervisionService } from '../supervision/supervision.service';

/** Who is on the other end of an MCP connection: decided by the transport's identity, never by tool arguments. */
export type McpIdentity = { kind: 'main_brain' } | { kind: 'worker'; session_id: string; alias: string };

/** The reserved MCP server name the profile emitters inject (docs/architecture/decisions.md#names). */
export const MCP_SERVER_NAME = 'brainstem';

export const RESOURCE_STATUS = 'brainstem://supervision/status';
export const RESOURCE_CURRENT_ROUND = 'brainstem://supervision/current-round';
/** Offered as a slash command by clients that list prompts (Claude Code: /mcp__brainstem__current_round). */
export const PROMPT_CURRENT_ROUND = 'current_round';

export interface McpDeps {
  registry: ToolRegistry;
  supervision: SupervisionService;
  version: string;
}

const logger = new Logger('mcp');

/**
 * tools/call with its arguments unchecked. The SDK's Server validates tools/call itself and answers bad params
 * with -32602 naming them, but only after the base protocol has parsed the request with the schema given here,
 * whose failures go out as -32603 (internal error). Loose here, so the Server's own check is the one that answers.
 */
const CallToolRequestLooseSchema = CallToolRequestSchema.extend({
  params: CallToolRequestParamsSchema.extend({ arguments: z.unknown().optional() }),
});

function audienceOf(identity: McpIdentity): ToolAudience {
  return identity.kind === 'main_brain' ? 'main_brain' : 'worker';
}

function asResult(value: unknown, textOnly: boolean): CallToolResult {
  const structured = !textOnly && typeof value === 'object' && value !== null && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {};
  // Compact: the text goes into an agent's context, where indentation is tokens spent on nothing.
  return { content: [{ type: 'text', text: JSON.stringify(value ?? null) }], ...structured };
}

/** Tool-level failures are results with isError (the agent reads them and retries), never protocol errors. */
function asError(e: unknown, tool: string): CallToolResult {
  if (e instanceof DomainError) return { isError: true, content: [{ type: 'text', text: `${e.code}: ${e.message}` }] };
  logger.error(`tool ${tool} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  return { isError: true, content: [{ type: 'text', text: `internal_error: ${tool} failed: ${e instanceof Error ? e.message : String(e)}` }] };
}

function instructionsFor(identity: McpIdentity): string {
  if (identity.kind === 'worker') {
    return (
      `You are Brainstem worker session ${identity.session_id} (${identity.alias}). Use report_progress, notify_blocked, ` +
      'ask_human and request_context to keep your supervisor informed; they always act on your own session.'
    );
  }
  return (
    'You are the Brainstem main brain. You are woken in supervision rounds. When Brainstem hosts you, the round comes as ' +
    'your turn and your last message ends it; otherwise read the resource ' +
    `${RESOURCE_CURRENT_ROUND} for the round's prompt, act with the tools, then call complete_round.`
  );
}

/**
 * One MCP server per connection identity, over the one ToolRegistry that REST serves too. The low-level
 * Server is used (not McpServer) so the registry's JSON schemas go out as they are, with no zod copy.
 */
export function createMcpServer(identity: McpIdentity, deps: McpDeps): Server {
  const main = identity.kind === 'main_brain';
  const server = new Server(
    { name: MCP_SERVER_NAME, version: deps.version },
    { capabilities: { tools: {}, ...(main ? { resources: {}, prompts: {} } : {}) }, instructions: instructionsFor(identity) },
  );
  const audience = audienceOf(identity);
  const ctx = identity.kind === 'worker' ? { actor: 'worker', session_id: identity.session_id } : { actor: 'main_brain' };

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: deps.registry.list(audience).map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters })),
  }));
  const textOnly = new Set(deps.registry.list(audience).filter((t) => t.textOnly).map((t) => t.name));

  server.setRequestHandler(CallToolRequestLooseSchema, async (req, extra) => {
    // The Server's check above has already refused arguments that are not an object.
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    try {
      return asResult(await deps.registry.call(req.params.name, args, audience, { ...ctx, signal: extra.signal }), textOnly.has(req.params.name));
    } catch (e) {
      return asError(e, req.params.name);
    }
  });

  if (main) {
    server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: [
        { uri: RESOURCE_STATUS, name: 'supervision-status', title: 'Supervision status', mimeType: 'application/json' },
        { uri: RESOURCE_CURRENT_ROUND, name: 'current-round', title: "The current supervision round's prompt", mimeType: 'text/plain' },
      ],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(req.params.uri, deps.supervision));
    server.setRequestHandler(ListPromptsRequestSchema, () => ({
      prompts: [
        {
          name: PROMPT_CURRENT_ROUND,
          title: 'Current supervision round',
          description: "The prompt of the round in flight (why you were woken, the goal, turns left, the rules), or the supervision status when none is.",
        },
      ],
    }));
    server.setRequestHandler(GetPromptRequestSchema, (req) => getPrompt(req.params.name, deps.supervision));
  }
  return server;
}

function readResource(uri: string, supervision: SupervisionService): ReadResourceResult {
  if (uri === RESOURCE_STATUS) {
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(supervision.brainStatus(), null, 2) }] };
  }
  if (uri === RESOURCE_CURRENT_ROUND) return { contents: [{ uri, mimeType: 'text/plain', text: currentRound(supervision) ?? 'No supervision round is in flight.' }] };
  throw new McpError(ErrorCode.InvalidParams, `no resource ${uri}; resources are ${RESOURCE_STATUS} and ${RESOURCE_CURRENT_ROUND}`);
}

function currentRound(supervision: SupervisionService): string | null {
  const id = supervision.status().autonomous?.round_in_flight ?? null;
  return id ? `Round ${id}\n\n${supervision.getRound(id).prompt}` : null;
}

function getPrompt(name: string, supervision: SupervisionService): GetPromptResult {
  if (name !== PROMPT_CURRENT_ROUND) throw new McpError(ErrorCode.InvalidParams, `no prompt ${name}; the prompt is ${PROMPT_CURRENT_ROUND}`);
  const round = currentRound(supervision);
  const text =
    round ??
    `No supervision round is in flight. Supervision status:\n${JSON.stringify(supervision.brainStatus(), null, 2)}\n\n` +
      'Start supervising with enable_supervision (a goal in task_hint); you will be woken in rounds.';
  return { description: 'Brainstem: the current supervision round', messages: [{ role: 'user', content: { type: 'text', text } }] };
}
