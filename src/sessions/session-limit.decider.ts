import type { SessionEvent } from './session.events';
import type { SessionSnapshot } from './session.machine';
import type { WorkerReach } from './worker-reach';
import { SessionDecision, refuse } from './session-refusal';
import { CONTINUE_TEXT, LimitHit, LimitSettings, resumeTime } from './session-limit.model';

/** The commands that park and resume a session at its model's limit (docs/guide/usage.md#usage-limits). */
export type LimitCommand =
  /** The worker's turn ended refused by its limit; `jitter` in [0, 1) spreads backoffs (an input, so the decider stays pure). */
  | { type: 'report_limit'; at: number; limit: LimitHit; settings: LimitSettings; jitter: number }
  /** Resume a parked session now (its timer, the user, the brain); a session not parked decides nothing. */
  | { type: 'resume_parked'; at: number; by: 'timer' | 'user' | 'main_brain'; worker: WorkerReach }
  /** Keep a parked session parked until someone resumes it: its timer is disarmed. */
  /** `fallback`: the session that goes on with its work under the profile's fallback (kept parked for it). */
  | { type: 'keep_parked'; at: number; fallback?: string };

export const isLimitCommand = (c: { type: string }): c is LimitCommand => c.type === 'report_limit' || c.type === 'resume_parked' || c.type === 'keep_parked';

/**
 * What a limit command decides on the session's state (each fact one the state takes). The timer's resume of a session
 * no longer parked, or that cannot take it now, decides nothing; the user's or the brain's is refused, saying why.
 */
export function decideLimitCommand(state: SessionSnapshot, cmd: LimitCommand, accepts: (s: SessionSnapshot, e: SessionEvent) => boolean): SessionDecision {
  const c = state.context;
  const { at } = cmd;
  const parked = c.parked ?? null;
  const taken = (events: SessionEvent[]): SessionDecision => ({ events: events.every((e) => accepts(state, e)) ? events : [] });
  switch (cmd.type) {
    case 'report_limit': {
      const attempt = (c.limit_attempts ?? 0) + 1;
      const when = resumeTime(at, cmd.limit, attempt, cmd.settings, cmd.jitter);
      return taken([
        {
          type: 'session.parked',
          at,
          reason: cmd.limit.reason,
          resumes_at: when.resumes_at,
          source: when.source,
          limit_type: cmd.limit.limit_type,
          attempt,
          // A prompt the model never saw is sent again as it was; a refusal in a row keeps the first one's.
          prompt: cmd.limit.prompt ?? parked?.prompt ?? null,
          ...(when.clamped ? { clamped: when.clamped, reported_resets_at: cmd.limit.resets_at } : {}),
        },
      ]);
    }
    case 'keep_parked':
      if (parked === null) return notParked(state);
      if (parked.resumes_at === null && cmd.fallback === undefined) return { events: [] };
      const by = cmd.fallback === undefined ? { source: 'user' as const } : { source: 'fallback' as const, fallback_session_id: cmd.fallback };
      return taken([{ type: 'session.parked', at, reason: parked.reason, resumes_at: null, ...by, limit_type: parked.limit_type, attempt: parked.attempt, prompt: parked.prompt }]);
    case 'resume_parked': {
      const timer = cmd.by === 'timer';
      if (parked === null) return timer ? { events: [] } : notParked(state);
      // Held or being stopped, it gets no turn: it stays parked, and a release resumes it.
      const why = c.held !== null ? 'session_held' : c.stop_deadline_at !== null ? 'session_stopping' : cmd.worker !== 'ready' ? 'message_not_deliverable' : null;
      if (why !== null) return timer ? { events: [] } : refuse(why, `session ${c.alias} cannot resume now: ${RESUME_BLOCKED[why]}`);
      return taken([
        { type: 'session.unparked', at, by: cmd.by },
        { type: 'session.message_dispatched', at, text: parked.prompt ?? CONTINUE_TEXT },
      ]);
    }
  }
}

const RESUME_BLOCKED = {
  session_held: 'it is held (release it first)',
  session_stopping: 'it is being stopped',
  message_not_deliverable: 'its worker cannot take a message',
} as const;

function notParked(state: SessionSnapshot): SessionDecision {
  return refuse('session_not_parked', `session ${state.context.alias} is not parked at a limit`);
}
