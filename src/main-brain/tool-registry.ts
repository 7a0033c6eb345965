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
  /** The user made this call, or confirmed it: the human gate has nothing to ask. */
  human?: true;
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
  /**
   * The human gate: for a call only the user may allow, exactly what it will do, in plain language; null runs it now.
   * Such a call by anyone but the user runs nothing: it waits for the user's confirmation.
   */
  irreversible?: (args: A, ctx: ToolContext) => Promise<string | null> | string | null;
}

/** A call held by the human gate: the tool, its validated arguments, what it will do, who asked. */
export interface GatedCall {
  tool: string;
  args: Record<string, unknown>;
  description: string;
  actor: string;
}

/** Holds a gated call for the user and answers the caller (that it waits for the user). */
export type GateKeeper = (call: GatedCall) => Promise<unknown>;

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
  private readonly ajv = withTextLimit(new Ajv({ allErrors: true, strict: true }));
  private readonly tools = new Map<string, { def: ToolDefinition; validate: ValidateFunction }>();
  private keeper: GateKeeper | null = null;

  register<A>(def: ToolDefinition<A>): void {
    if (this.tools.has(def.name)) throw new Error(`tool ${def.name} is registered twice`);
    this.tools.set(def.name, { def: def as unknown as ToolDefinition, validate: this.ajv.compile(def.parameters) });
  }

  list(audience: ToolAudience): ToolInfo[] {
    return [...this.tools.values()]
      .filter(({ def }) => def.audience === audience)
      .map(({ def }) => ({ name: def.name, description: def.description, parameters: def.parameters, ...(def.textOnly ? { textOnly: true as const } : {}) }));
  }

  gateWith(keeper: GateKeeper): void {
    this.keeper = keeper;
  }

  /**
   * Validates the arguments against the tool's schema, then runs it, unless the human gate holds the call for the
   * user. Errors are DomainErrors, never crashes.
   */
  async call(name: string, args: unknown, audience: ToolAudience, ctx: ToolContext): Promise<unknown> {
    const tool = this.tools.get(name);
    if (!tool || tool.def.audience !== audience) throw new DomainError('not_found', `no tool ${name}`);
    const value = this.validated(name, tool.validate, args);
    const description = tool.def.irreversible && !ctx.human ? await tool.def.irreversible(value, ctx) : null;
    if (description === null) return tool.def.handler(value, ctx);
    // Fails closed: with no one to hold it, a gated call does not run.
    if (!this.keeper) throw new DomainError('permission_denied', `${name}: this call needs the user's confirmation, and none can be asked`);
    return this.keeper({ tool: name, args: value, description, actor: ctx.actor });
  }

  /** Runs a call the user confirmed, with the arguments the gate held (validated again: they come back from the journal). */
  async runConfirmed(name: string, args: Record<string, unknown>): Promise<unknown> {
    const tool = this.tools.get(name);
    if (!tool) throw new DomainError('not_found', `no tool ${name}`);
    return tool.def.handler(this.validated(name, tool.validate, args), { actor: 'user', human: true });
  }

  private validated(name: string, validate: ValidateFunction, args: unknown): Record<string, unknown> {
    const value = args ?? {};
    if (!validate(value)) throw new DomainError('invalid_input', `${name}: ${describe(validate.errors)}`);
    return value as Record<string, unknown>;
  }
}

/** `maxBytes`: the text limit in bytes of UTF-8, the unit the DTOs check it in (src/common/text-limit.ts). */
function withTextLimit(ajv: Ajv): Ajv {
  return ajv.addKeyword({
    keyword: 'maxBytes',
    type: 'string',
    schemaType: 'number',
    error: { message: ({ schema }) => `must be at most ${String(schema)} bytes (64 KiB)` },
    validate: (max: number, data: string) => Buffer.byteLength(data, 'utf8') <= max,
  });
}
