import { IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { NEVER, ReplaySubject, filter, firstValueFrom, fromEvent, takeUntil } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { DomainEventOf } from '../bus/domain-event';
import { DomainError } from '../common/domain-error';
import { Describe } from '../common/dto-schema';
import { BlockedFields, ContextQueryFields, ProgressFields, QuestionFields, SessionRef, Signal } from '../sessions/session.dto';
import { SessionsService } from '../sessions/sessions.service';
import { ToolContext, ToolRegistry } from './tool-registry';

/** The name Claude Code is given: `--permission-prompt-tool mcp__brainstem__permission_prompt`. */
export const PERMISSION_PROMPT_TOOL = 'permission_prompt';

const OWN_SESSION = 'Optional and only ever your own session (cs_ id or alias): worker tools act on the calling session alone.';

// A worker tool's arguments: the signal's fields (the DTO of POST …/signals) and, optionally, its own session.
class ProgressArgs extends ProgressFields {
  @IsOptional() @SessionRef() @Describe(OWN_SESSION) session?: string;
}
class BlockedArgs extends BlockedFields {
  @IsOptional() @SessionRef() @Describe(OWN_SESSION) session?: string;
}
class QuestionArgs extends QuestionFields {
  @IsOptional() @SessionRef() @Describe(OWN_SESSION) session?: string;
}
class ContextQueryArgs extends ContextQueryFields {
  @IsOptional() @SessionRef() @Describe(OWN_SESSION) session?: string;
}
/** What Claude Code sends its permission prompt tool. */
class PermissionPromptArgs {
  @IsString() @IsNotEmpty() @MaxLength(200) tool_name!: string;
  @IsObject() input!: Record<string, unknown>;
  @IsOptional() @IsString() @MaxLength(200) tool_use_id?: string;
}

/**
 * The caller's session, after checking that any session the arguments name is that same one.
 * A worker connection is bound to one session by its identity, never by what it writes in arguments.
 */
function callerSession(sessions: SessionsService, ctx: ToolContext, named: string | undefined): string {
  if (!ctx.session_id) throw new DomainError('permission_denied', 'worker tools need a worker identity (X-Brainstem-Session / BRAINSTEM_SESSION_ID)');
  if (named !== undefined) {
    const target = sessions.status(named);
    if (target.id !== ctx.session_id) {
      throw new DomainError('permission_denied', `worker tools act only on your own session (${ctx.session_id}); ${named} is another session`);
    }
  }
  return ctx.session_id;
}

/** The worker tools (docs/architecture/decisions.md#tools): each one is a signal on the caller's own session (same path as POST …/signals). */
export function registerWorkerTools(registry: ToolRegistry, sessions: SessionsService, bus: EventBus): void {
  const signal = async (named: string | undefined, ctx: ToolContext, body: Signal) => {
    const s = await sessions.signal(callerSession(sessions, ctx, named), body);
    return { session: { id: s.id, alias: s.alias, state: s.state, state_label: s.state_label, last_progress: s.last_progress } };
  };

  registry.register<ProgressArgs>({
    name: 'report_progress',
    audience: 'worker',
    description:
      'Report your progress to the supervisor. status working is a heartbeat; completed (milestone done), blocked and ' +
      'needs_review wake the main brain when supervision is on.',
    parameters: ProgressArgs,
    handler: (a, ctx) => signal(a.session, ctx, { type: 'report_progress', status: a.status, ...(a.message !== undefined ? { message: a.message } : {}) }),
  });

  // The one-text-field signals: the field named as docs/architecture/decisions.md#tools names it (reason, question, query) and the DTO.
  const textSignals: Array<{ name: string; field: string; args: new () => object; description: string; toSignal: (text: string) => Signal }> = [
    {
      name: 'notify_blocked',
      field: 'reason',
      args: BlockedArgs,
      description: 'Say you are blocked and why; always wakes the main brain when supervision is on.',
      toSignal: (reason) => ({ type: 'notify_blocked', reason }),
    },
    {
      name: 'ask_human',
      field: 'question',
      args: QuestionArgs,
      description: 'Ask the human a question; it goes to the main chat, your session waits for a decision (待拍板), and the answer comes back as a message.',
      toSignal: (question) => ({ type: 'ask_human', question }),
    },
    {
      name: 'request_context',
      field: 'query',
      args: ContextQueryArgs,
      description: 'Ask the main brain for context you lack (a file, a decision, a credential location); the answer comes back as a message. Does not wake supervision.',
      toSignal: (query) => ({ type: 'request_context', query }),
    },
  ];
  for (const { name, field, args, description, toSignal } of textSignals) {
    registry.register<Record<string, string>>({
      name,
      audience: 'worker',
      description,
      parameters: args as new () => Record<string, string>,
      handler: (a, ctx) => signal(a.session, ctx, toSignal(a[field])),
    });
  }

  registry.register<PermissionPromptArgs>({
    name: PERMISSION_PROMPT_TOOL,
    audience: 'worker',
    description:
      `Claude Code's permission prompt tool (--permission-prompt-tool mcp__brainstem__${PERMISSION_PROMPT_TOOL}): puts your session in 待授权 ` +
      'and answers once the supervisor or the user resolves it, as {"behavior":"allow","updatedInput":…} or {"behavior":"deny","message":…}.',
    // Claude Code refuses a permission prompt answer that is anything but one text block ("invalid result").
    textOnly: true,
    parameters: PermissionPromptArgs,
    handler: (a, ctx) => awaitPermission(sessions, bus, callerSession(sessions, ctx, undefined), a.tool_name, a.input, ctx.signal),
  });
}

type PermissionAnswer = { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string };
type Outcome = DomainEventOf<'session.permission_resolved'> | DomainEventOf<'session.exited'>;

/**
 * Raises a permission request on the caller's session and waits for its resolution, the session's exit, or
 * the caller going away (the request stays pending on the session: the supervisor may still answer it).
 * The subscription starts before the request so a resolution that comes quickly is not missed.
 */
async function awaitPermission(
  sessions: SessionsService,
  bus: EventBus,
  sessionId: string,
  tool: string,
  input: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<PermissionAnswer> {
  const outcomes = new ReplaySubject<Outcome>();
  const stream = `session-${sessionId}`;
  const sub = bus
    .ofType('session.permission_resolved', 'session.exited')
    .pipe(filter((e) => e.stream === stream))
    .subscribe(outcomes);
  try {
    const { status, request_id: requestId, denied, allowed } = await sessions.requestPermission(sessionId, tool, input);
    // A profile's deny matched it as it arrived: denied at once, with the rule.
    if (denied !== null) return { behavior: 'deny', message: denied };
    // Bash in a sandboxed session whose profile lets it run unasked.
    if (allowed) return { behavior: 'allow', updatedInput: input };
    const gone$ = signal ? fromEvent(signal, 'abort') : NEVER;
    const outcome = signal?.aborted
      ? null
      : await firstValueFrom(outcomes.pipe(filter((e) => e.type === 'session.exited' || e.data.request_id === requestId), takeUntil(gone$)), { defaultValue: null });
    if (outcome === null) throw new DomainError('permission_wait_abandoned', `the caller went away while session ${status.alias}'s permission request was pending`);
    if (outcome.type === 'session.exited') return { behavior: 'deny', message: 'the session exited before the request was resolved' };
    return outcome.data.decision === 'allow'
      ? { behavior: 'allow', updatedInput: input }
      : { behavior: 'deny', message: outcome.data.reason ?? 'denied by the supervisor' };
  } finally {
    sub.unsubscribe();
  }
}
