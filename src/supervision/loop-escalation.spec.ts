import { HeldLoop, LoopEscalation } from './loop-escalation';
import { SupervisionJournalEvent } from './supervision.decider';
import { WakeReason } from './supervision.machine';
import { LoopTrigger } from './wake-triggers';

const loop: LoopTrigger = {
  kind: 'loop',
  reason: { alias: 'w1', evidence: 'Bash {"command":"make"}', message: 'the same call failed 5 times', session_id: 'cs_1', state: 'working', trigger: 'loop_repeated_failure' },
  pattern: 'repeated_failure',
  signature: 'sig',
  summary: 'the same call failed 5 times',
  escalate_after: 3,
};

/** A loop escalation whose take_loop decides `decided`; what it woke, held, asked and logged. */
function escalation(decided: SupervisionJournalEvent[], hold: () => Promise<boolean> = async () => true) {
  const woke: WakeReason[] = [];
  const holds: Array<[string, string, string]> = [];
  const asked: HeldLoop[] = [];
  const logged: string[] = [];
  const log = { log: (m: string) => logged.push(m), warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m) };
  const e = new LoopEscalation(
    {
      hold: (id, _reason, detail, by) => {
        holds.push([id, detail, by]);
        return hold();
      },
    },
    { take: async () => decided, wake: (r) => woke.push(r) },
    log,
  );
  e.onHeld(async (held) => asked.push(held));
  return { e, woke, holds, asked, logged };
}

const data = { session_id: 'cs_1', pattern: 'repeated_failure', signature: 'sig' };

describe('loop escalation', () => {
  it('Given take_loop wakes the brain, Then the loop is a reason of the next round, saying how many wake-ups are left before the hold', async () => {
    const { e, woke, holds } = escalation([{ type: 'supervision.loop_woken', data: { ...data, wakes: 2 } }]);
    await e.take(loop);
    expect(woke).toEqual([{ ...loop.reason, message: 'the same call failed 5 times; wake-up 2 of 3 for this loop before Brainstem holds the session and asks the user' }]);
    expect(holds).toEqual([]);
  });

  it('Given take_loop escalates it, Then the session is held by Brainstem and the user asked, and no round is woken', async () => {
    const { e, woke, holds, asked } = escalation([{ type: 'supervision.loop_escalated', data: { ...data, wakes: 3 } }]);
    await e.take(loop);
    expect(holds).toEqual([['cs_1', 'repeated_failure after 3 wake-ups of the main brain: the same call failed 5 times', 'brainstem']]);
    expect(asked).toEqual([{ session_id: 'cs_1', alias: 'w1', pattern: 'repeated_failure', summary: 'the same call failed 5 times', wakes: 3 }]);
    expect(woke).toEqual([]);
  });

  it('Given the session was held already (another pattern got there first), Then the user is not asked twice', async () => {
    const { e, asked } = escalation([{ type: 'supervision.loop_escalated', data: { ...data, wakes: 3 } }], async () => false);
    await e.take(loop);
    expect(asked).toEqual([]);
  });

  it('Given the hold fails (its node is down), Then it is logged and nobody is asked about a hold that did not happen', async () => {
    const { e, asked, logged } = escalation([{ type: 'supervision.loop_escalated', data: { ...data, wakes: 3 } }], async () => {
      throw new Error('owner_unavailable');
    });
    await e.take(loop);
    expect(asked).toEqual([]);
    expect(logged).toEqual(['w1 (cs_1) kept looping (repeated_failure) after 3 wake-ups, but holding it failed: owner_unavailable']);
  });
});
