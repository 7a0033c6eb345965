import { roundPrompt } from './round-prompt';
import { foldRounds } from './round-history';
import { SupervisionContext, wakeReason } from './supervision.machine';

const context: SupervisionContext = {
  ever_enabled: true,
  turns_used: 1,
  max_turns: 60,
  task_hint: 'ship it',
  started_by: 'user',
  closed_reason: null,
  summary: null,
  round: null,
  changed_at: 0,
};

const reasons = [wakeReason({ session_id: 'cs_a', alias: 'w1', trigger: 'ask_human', state: 'pending_decision', message: 'Deploy?' })];
/** The prompt of that round, a session with nothing to report named in it. */
const expected = roundPrompt({ round_id: 'rd_1', reasons, evidence: [{ alias: 'w1', kind: 'nothing', session_id: 'cs_a', text: '' }], task_hint: 'ship it', turns_used: 1, max_turns: 60 });

/** round.started as the journal publishes it, counting how often what only its prompt reads is read: each writing of the prompt. */
function startedEvent(): { event: { type: string; data: unknown; at: number; seq: number }; writes: () => number } {
  let writes = 0;
  const round = { id: 'rd_1', started_at: 0, deadline_at: 600_000, reasons, reports: [] };
  Object.defineProperty(round, 'shared_work_trees', { enumerable: true, get: () => void writes++ });
  return { event: { type: 'round.started', data: { round }, at: 0, seq: 7 }, writes: () => writes };
}

describe('round history', () => {
  it('writes a round\'s prompt when it is first read, once, and an ended round keeps it', () => {
    // Given a round folded in
    const started = startedEvent();
    const rounds = foldRounds(new Map(), started.event, context);
    const view = rounds.get('rd_1')!.view;
    // Then its prompt is not written yet
    expect(started.writes()).toBe(0);
    // When it is read, twice; Then it is written once, from the round and the context at its start
    expect(view.prompt).toBe(expected);
    expect(view.prompt).toBe(expected);
    expect(started.writes()).toBe(1);
    // And the view serialises with the prompt in its place
    expect(Object.keys(JSON.parse(JSON.stringify(view)))).toEqual(['id', 'turn', 'status', 'started_at', 'deadline_at', 'ended_at', 'reasons', 'prompt', 'summary', 'failure', 'interruption']);
    expect(JSON.parse(JSON.stringify(view)).prompt).toBe(expected);
    // When the round ends; Then its view is a new one, ended, with the same prompt, and the one handed out is as it was
    const ended = foldRounds(rounds, { type: 'round.completed', data: { round_id: 'rd_1', summary: 'done' }, at: 1000, seq: 8 }, context).get('rd_1')!.view;
    expect(ended).toMatchObject({ status: 'completed', summary: 'done', ended_at: new Date(1000).toISOString(), prompt: expected });
    expect(view.status).toBe('in_flight');
  });

  it('never writes the prompt of a round nobody reads, ended or not', () => {
    // Given a round started and ended, as replay folds them
    const started = startedEvent();
    const rounds = foldRounds(foldRounds(new Map(), started.event, context), { type: 'round.timed_out', data: { round_id: 'rd_1' }, at: 1000, seq: 8 }, context);
    // Then no prompt was written
    expect(rounds.get('rd_1')!.view.status).toBe('timed_out');
    expect(started.writes()).toBe(0);
  });
});
