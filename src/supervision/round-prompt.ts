import { WakeReason } from './supervision.machine';

export interface RoundPromptInput {
  round_id: string;
  reasons: readonly WakeReason[];
  task_hint: string;
  turns_used: number;
  max_turns: number;
}

const TRIGGER_TEXT: Record<string, string> = {
  pending_handling: 'finished its turn and waits for handling (待处理)',
  pending_authorization: 'waits for a permission decision (待授权)',
  pending_decision: 'waits for a human decision (待拍板)',
  worker_exited: 'exited',
  progress_completed: 'reported a milestone completed',
  progress_blocked: 'reported it is blocked',
  progress_needs_review: 'asks for a review',
  notify_blocked: 'is blocked',
  ask_human: 'asked the human a question',
  stall: 'has been waiting too long (stall watchdog)',
  initial: 'supervision started',
  interrupted_round: 'was in a round interrupted by a restart',
};

/** What the main brain reads at the start of a round: why it was woken, the goal, turns left and the rules. */
export function roundPrompt(input: RoundPromptInput): string {
  const left = input.max_turns - input.turns_used;
  const lines = [
    `Supervision round ${input.round_id} (turn ${input.turns_used} of ${input.max_turns}; ${left} left).`,
    input.task_hint ? `Goal: ${input.task_hint}` : 'Goal: none recorded; set one with enable_supervision.',
    '',
    'Why you were woken:',
    ...input.reasons.map((r) => {
      const who = r.session_id === '-' ? '-' : `${r.alias} (${r.session_id})`;
      const what = TRIGGER_TEXT[r.trigger] ?? r.trigger;
      const state = r.state ? ` [state: ${r.state}]` : '';
      const said = r.message ? `\n    says: ${r.message}` : '';
      return `  - ${who} ${what}${state}${said}`;
    }),
    '',
    'Rules: supervision never bypasses runtime, Agent Profile or machine permissions. Ask the user before',
    'irreversible actions (delete, publish, merge, external notification). Dispatch work, intervene on',
    'anomalies, talk to the human, and wrap up with finish_supervision when the goal is met.',
    'End this round with complete_round (or POST .../rounds/{id}/complete).',
  ];
  return lines.join('\n');
}
