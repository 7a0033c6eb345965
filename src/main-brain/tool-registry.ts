import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { DomainError } from '../common/domain-error';

/** Who may call a tool: the orchestrating main brain, or a worker acting on its own session. */
export type ToolAudience = 'main_brain' | 'worker';

export interface ToolContext {
  actor: string;
  /** A worker's own session; worker tools act only on it. */
  session_id?: string;
  /** Aborted when the caller goes away (MCP connection closed, request cancelled): long waits end with it. */
  signal?: AbortSignal;
}

export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
  dependencies?: Record<string, string[]>;
  additionalProperties: false;
}

export interface ToolDefinition<A = Record<string, unknown>> {
  name: string;
  description: string;
  audience: ToolAudience;
  parameters: JsonSchemaObject;
  handler: (args: A, ctx: ToolContext) => Promise<unknown> | unknown;
  /** Answered over MCP as one text block and nothing beside it (no structuredContent). */
  textOnly?: true;
}

export interface ToolInfo {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
  textOnly?: true;
}

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => {
      const path = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'arguments';
      if (e.keyword === 'additionalProperties') return `${path === 'arguments' ? '' : path + '.'}${(e.params as { additionalProperty: string }).additionalProperty}: unknown field`;
      if (e.keyword === 'required') return `${path === 'arguments' ? '' : path + '.'}${(e.params as { missingProperty: string }).missingProperty}: is required`;
      return `${path}: ${e.message}`;
    })
    .join('; ');
}

/** One registry of tools, served over REST and MCP alike: no tool is written twice. */
export class ToolRegistry {
  private readonly ajv = new Ajv({ allErrors: true, strict: true });
  private readonly tools = new Map<string, { def: ToolDefinition; validate: ValidateFunction }>();

  register<A>(def: ToolDefinition<A>): void {
    if (this.tools.has(def.name)) throw new Error(`tool ${def.name} is registered twice`);
    this.tools.set(def.name, { def: def as unknown as ToolDefinition, validate: this.ajv.compile(def.parameters) });
  }

  list(audience: ToolAudience): ToolInfo[] {
    return [...this.tools.values()]
      .filter(({ def }) => def.audience === audience)
      .map(({ def }) => ({ name: def.name, description: def.description, parameters: def.parameters, ...(def.textOnly ? { textOnly: true as const } : {}) }));
  }

  /** Validates the arguments against the tool's schema, then runs it. Errors are DomainErrors, never crashes. */
  async call(name: string, args: unknown, audience: ToolAudience, ctx: ToolContext): Promise<unknown> {
    const tool = this.tools.get(name);
    if (!tool || tool.def.audience !== audience) throw new DomainError('not_found', `no tool ${name}`);
    const value = args ?? {};
    if (!tool.validate(value)) throw new DomainError('invalid_input', `${name}: ${describe(tool.validate.errors)}`);
    return tool.def.handler(value as Record<string, unknown>, ctx);
  }
}
