import { DomainError } from '../common/domain-error';
import { SchemaObject, toolSchema } from '../common/dto-schema';
import { parseDto } from '../common/validation-errors';

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

/** The class-validator DTO of a tool's arguments: it validates a call, and the tool's JSON Schema is read from it. */
export type ToolArguments<A> = new () => A;

export interface ToolDefinition<A = Record<string, unknown>> {
  name: string;
  description: string;
  audience: ToolAudience;
  parameters: ToolArguments<A>;
  handler: (args: A, ctx: ToolContext) => Promise<unknown> | unknown;
  /** Answered over MCP as one text block and nothing beside it (no structuredContent). */
  textOnly?: true;
  /**
   * The human gate: for a call only the user may allow, exactly what it will do, in plain language; null runs it now.
   * Such a call by anyone but the user runs nothing: it waits for the user's confirmation.
   */
  irreversible?: (args: A, ctx: ToolContext) => Promise<string | null> | string | null;
  /**
   * What the gate asks first: would this call change anything? A gated call that would not (a merge with nothing to
   * merge, a stop of a session that exited, a release of one not held) is answered at once, never held for the user, who
   * would only be asked to confirm nothing. Null: it would change something, and `irreversible` says what.
   */
  unchanged?: (args: A, ctx: ToolContext) => Promise<NoChange | null> | NoChange | null;
}

/** A call that would change nothing, answered at once: the refusal it would get, or its answer (nothing was done). */
export type NoChange = { refused: DomainError } | { answer: unknown };

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
  parameters: SchemaObject;
  textOnly?: true;
}

interface Registered {
  def: ToolDefinition;
  schema: SchemaObject;
}

/** One registry of tools, served over REST and MCP alike: no tool is written twice. */
export class ToolRegistry {
  private readonly tools = new Map<string, Registered>();
  private keeper: GateKeeper | null = null;

  register<A>(def: ToolDefinition<A>): void {
    if (this.tools.has(def.name)) throw new Error(`tool ${def.name} is registered twice`);
    this.tools.set(def.name, { def: def as unknown as ToolDefinition, schema: toolSchema(def.parameters as ToolArguments<object>) });
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  list(audience: ToolAudience): ToolInfo[] {
    return [...this.tools.values()]
      .filter(({ def }) => def.audience === audience)
      .map(({ def, schema }) => ({ name: def.name, description: def.description, parameters: schema, ...(def.textOnly ? { textOnly: true as const } : {}) }));
  }

  gateWith(keeper: GateKeeper): void {
    this.keeper = keeper;
  }

  /**
   * Validates the arguments by the tool's DTO (as a request body is), then runs it, unless the human gate holds the call for the
   * user (a gated call that would change nothing is answered at once instead). Errors are DomainErrors, never crashes.
   */
  async call(name: string, args: unknown, audience: ToolAudience, ctx: ToolContext): Promise<unknown> {
    const tool = this.tools.get(name);
    if (!tool || tool.def.audience !== audience) throw new DomainError('not_found', `no tool ${name}`);
    const value = this.validated(tool.def, args);
    const gated = tool.def.irreversible !== undefined && !ctx.human;
    const same = gated && tool.def.unchanged ? await tool.def.unchanged(value, ctx) : null;
    if (same !== null && 'refused' in same) throw same.refused;
    if (same !== null) return same.answer;
    const description = gated && tool.def.irreversible ? await tool.def.irreversible(value, ctx) : null;
    if (description === null) return tool.def.handler(value, ctx);
    // Fails closed: with no one to hold it, a gated call does not run.
    if (!this.keeper) throw new DomainError('permission_denied', `${name}: this call needs the user's confirmation, and none can be asked`);
    return this.keeper({ tool: name, args: value, description, actor: ctx.actor });
  }

  /** Runs a call the user confirmed, with the arguments the gate held (validated again: they come back from the journal). */
  async runConfirmed(name: string, args: Record<string, unknown>): Promise<unknown> {
    const tool = this.tools.get(name);
    if (!tool) throw new DomainError('not_found', `no tool ${name}`);
    return tool.def.handler(this.validated(tool.def, args), { actor: 'user', human: true });
  }

  /** The arguments as a plain object of the fields the DTO declares (the journal keeps a gated call's arguments). */
  private validated(def: ToolDefinition, args: unknown): Record<string, unknown> {
    // A tool's schema has no nullable field (an optional one is left out), where IsOptional would let null through.
    const nulls = args !== null && typeof args === 'object' ? Object.entries(args).filter(([, v]) => v === null) : [];
    if (nulls.length > 0) throw new DomainError('invalid_input', `${def.name}: ${nulls.map(([k]) => `${k}: must not be null (leave it out)`).join('; ')}`);
    return Object.fromEntries(Object.entries(parseDto(def.parameters, args ?? {}, `${def.name}: `)).filter(([, v]) => v !== undefined));
  }
}
