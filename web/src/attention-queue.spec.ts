import { attentionSince, needsAttention } from './attention-queue';
import { Session } from './types';

const NOW = Date.parse('2026-11-26T10:00:00.000Z');
const base = { state: 'working', state_since: '2026-11-26T09:00:00.000Z', held: null, loop: null } as const;
const session = (over: Partial<Session>): Session => ({ ...base, ...over }) as Session;
const loop = (until: string) => ({ pattern: 'repeated_call' as const, count: 5, summary: 's', evidence: 'e', since: '2026-11-26T09:50:00.000Z', detected_at: '2026-11-26T09:55:00.000Z', until });

describe('the attention queue', () => {
  it('given a working session, then it needs no one; given it pending, then it does since its state began', () => {
    expect(needsAttention(session({}), NOW)).toBe(false);
    const pending = session({ state: 'pending_decision', state_since: '2026-11-26T09:30:00.000Z' });
    expect(needsAttention(pending, NOW)).toBe(true);
    expect(attentionSince(pending, NOW)).toBe('2026-11-26T09:30:00.000Z');
  });

  it('given a working session with a loop still cooling down, then it needs someone since the loop was detected; once the cooldown ended, not', () => {
    const looping = session({ loop: loop('2026-11-26T10:05:00.000Z') });
    expect(needsAttention(looping, NOW)).toBe(true);
    expect(attentionSince(looping, NOW)).toBe('2026-11-26T09:55:00.000Z');
    expect(needsAttention(session({ loop: loop('2026-11-26T09:59:59.000Z') }), NOW)).toBe(false);
  });

  it('given a held session, then it needs someone until it is released, whatever its state; given it exited, then no longer', () => {
    const held = { reason: 'loop' as const, detail: 'repeated_call', since: '2026-11-26T09:58:00.000Z' };
    expect(needsAttention(session({ held, state: 'pending_handling', state_since: '2026-11-26T09:59:00.000Z' }), NOW)).toBe(true);
    expect(attentionSince(session({ held, state: 'pending_handling', state_since: '2026-11-26T09:59:00.000Z' }), NOW)).toBe('2026-11-26T09:58:00.000Z');
    expect(needsAttention(session({ held, state: 'exited' }), NOW)).toBe(false);
  });
});
