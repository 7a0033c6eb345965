import { roundPrompt } from './round-prompt';

describe('round prompt', () => {
  it('names each session, what it did and said, the goal, turns left and the standing rules', () => {
    const text = roundPrompt({
      round_id: 'rd_1',
      task_hint: 'fix the build',
      turns_used: 3,
      max_turns: 60,
      reasons: [
        { session_id: 'cs_a', alias: 'w1', trigger: 'ask_human', state: 'pending_decision', message: 'Deploy to prod?' },
        { session_id: 'cs_b', alias: 'w2', trigger: 'progress_completed', state: 'working', message: null },
      ],
    });
    expect(text).toContain('turn 3 of 60; 57 left');
    expect(text).toContain('Goal: fix the build');
    expect(text).toContain('w1 (cs_a) asked the human a question [state: pending_decision]\n    says: Deploy to prod?');
    expect(text).toContain('w2 (cs_b) reported a milestone completed');
    expect(text).toContain('never bypasses runtime, Agent Profile or machine permissions');
    expect(text).toContain('Ask the user before\nirreversible actions (delete, publish, merge, external notification)');
  });
});
