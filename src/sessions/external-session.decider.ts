import { posix } from 'node:path';
import { DomainErrorCode } from '../common/domain-error';
import { JsonObject, SessionEvent, SessionFact, SessionInput } from './session.events';
import { SessionSnapshot, accepts, stateOf } from './session.machine';

/**
 * The rules of external sessions, pure: claude sessions started outside Brainstem that report through its hooks
 * (docs/guide/external-sessions.md). One is created at its claude's first report, and each later report becomes the
 * fact it stands for; the session machine moves the state as it does for Brainstem's own workers.
 */

/** What an external session's hooks report, once their event is read (src/external maps claude's hook events onto these). */
export type ExternalReport =
  /** claude runs this session: its first report, or one from a new claude process (a resume). */
  | { kind: 'run'; pid: number | null; pid_start_time: string | null }
  /** A prompt was submitted, or a tool is about to run. */
  | { kind: 'activity'; activity: 'prompt' | 'tool'; tool: string | null }
  /** claude stopped: its turn ended. */
  | { kind: 'turn_ended'; result: string | null }
  /** prompt_only: claude showed its own permission prompt (a Notification): a request only when none is pending already. */
  | { kind: 'permission'; request_id: string; tool: string; input: JsonObject; prompt_only?: boolean }
  /** claude asks its user a question (AskUserQuestion, an elicitation dialog). */
  | { kind: 'question'; question: string }
  /** claude ended the session (SessionEnd). */
  | { kind: 'ended' }
  /** claude's process is gone, seen by its pid. */
  | { kind: 'gone' };

/** An external session, created at its claude's first report. */
export interface CreateExternalSession {
  type: 'create_external';
  at: number;
  id: string;
  alias: string;
  node: string;
  claude_session_id: string;
  transcript_path: string | null;
  cwd: string;
  /** The profile bound to its cwd (as for any session): its deny rules hold over every allow given to it. */
  profile: { id: string; deny: string[] };
  /** External sessions join supervision only by the user's choice. */
  excluded: boolean;
}

export type ExternalCommand = CreateExternalSession | { type: 'report_external'; at: number; report: ExternalReport };

type Refusal = { error: { code: DomainErrorCode; message: string } };
type Decision = { events: SessionFact[] } | Refusal;

const refuse = (code: DomainErrorCode, message: string): Refusal => ({ error: { code, message } });

/** A reported fact: journaled when the state takes it, else nothing (a report after the end, say). */
const fact = (state: SessionSnapshot, event: SessionEvent): Decision => ({ events: accepts(state, event) ? [event] : [] });

export function decideCreateExternal(command: CreateExternalSession, state: SessionSnapshot | null): Decision {
  if (state !== null) return refuse('conflict', `coding session ${command.id} exists already`);
  if (!posix.isAbsolute(command.cwd)) return refuse('invalid_input', `cwd: must be an absolute path, not ${JSON.stringify(command.cwd)}`);
  const input: SessionInput = {
    id: command.id,
    alias: command.alias,
    title: `claude in ${posix.basename(command.cwd) || '/'}`,
    runtime: 'claude-code',
    profile_id: command.profile.id,
    cwd: posix.resolve(command.cwd),
    command: null,
    args: [],
    profile_args: [],
    permission_deny: command.profile.deny,
    env: {},
    excluded: command.excluded,
    created_at: command.at,
    node: command.node,
    origin: 'external',
    external: { claude_session_id: command.claude_session_id, transcript_path: command.transcript_path },
  };
  return { events: [{ type: 'session.created', at: command.at, input }] };
}

export function decideExternalReport(report: ExternalReport, at: number, state: SessionSnapshot): Decision {
  if (state.context.origin !== 'external') return refuse('conflict', `session ${state.context.alias} was started by Brainstem: its worker reports, not claude's hooks`);
  const s = stateOf(state);
  switch (report.kind) {
    case 'run': {
      const c = state.context;
      // The same process reporting again (every hook names it) records nothing; a new one, or a resume, does.
      if (s !== 'starting' && s !== 'exited' && c.pid === report.pid && c.pid_start_time === report.pid_start_time) return { events: [] };
      return fact(state, { type: 'session.external_run', at, pid: report.pid, pid_start_time: report.pid_start_time });
    }
    case 'activity':
      // Every tool call reports: only the one that ends a wait is a fact worth journaling.
      return s === 'working' ? { events: [] } : fact(state, { type: 'session.external_activity', at, activity: report.activity, tool: report.tool });
    case 'turn_ended':
      return fact(state, { type: 'session.turn_ended', at, result: report.result });
    case 'permission':
      if (report.prompt_only && s === 'pending_authorization') return { events: [] };
      return fact(state, { type: 'session.permission_requested', at, request_id: report.request_id, tool: report.tool, input: report.input });
    case 'question':
      return s === 'pending_decision' ? { events: [] } : fact(state, { type: 'session.asked_human', at, question: report.question });
    case 'ended':
      return fact(state, { type: 'session.exited', at, code: null, signal: null, reason: 'exited' });
    case 'gone':
      return fact(state, { type: 'session.exited', at, code: null, signal: null, reason: 'vanished' });
  }
}
