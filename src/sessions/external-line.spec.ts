import { ExternalLine } from './external-line';
import { ProcessRunner } from './runtimes/process-runner';

/** A runner whose processes are alive until `ended` says otherwise. */
function runner(): ProcessRunner & { ended: Set<number> } {
  const ended = new Set<number>();
  return {
    ended,
    isAlive: (pid: number) => !ended.has(pid),
    startTime: () => '1',
    spawn: () => {
      throw new Error('not here');
    },
    signalGroup: () => {
      throw new Error('an external claude is never signalled');
    },
    signalByEnv: () => [],
  } as unknown as ProcessRunner & { ended: Set<number> };
}

describe("the hold on an external session's claude", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('Given no Stop hook waiting, Then it takes no message; given one, Then the message is its answer and it takes no second one', async () => {
    const line = new ExternalLine(42, '1', runner(), () => undefined);
    expect(line.canReceive()).toBe(false);
    const { outcome } = line.waitForMessage();
    expect(line.canReceive()).toBe(true);
    line.send('go on');
    await expect(outcome).resolves.toBe('go on');
    expect(line.canReceive()).toBe(false);
    line.release();
  });

  it("Given a Stop wait replaced by a newer one, Then the older ends with none, and the older's end does not end the newer", async () => {
    const line = new ExternalLine(null, null, runner(), () => undefined);
    const first = line.waitForMessage();
    const second = line.waitForMessage();
    await expect(first.outcome).resolves.toBeNull();
    first.end();
    expect(line.canReceive()).toBe(true);
    second.end();
    await expect(second.outcome).resolves.toBeNull();
  });

  it('Given a permission wait, Then only the answer to its request resolves it', async () => {
    const line = new ExternalLine(null, null, runner(), () => undefined);
    const { outcome } = line.waitForAnswer('perm_1');
    expect(line.awaits('perm_1')).toBe(true);
    line.resolvePermission('perm_2', 'allow', null);
    line.resolvePermission('perm_1', 'deny', 'not here');
    await expect(outcome).resolves.toEqual({ decision: 'deny', reason: 'not here' });
    expect(line.awaits('perm_1')).toBe(false);
  });

  it('Given its claude ends, Then the watch sees it once, every waiting hook goes with no answer, and the process is never signalled', async () => {
    const r = runner();
    const gone = jest.fn();
    const line = new ExternalLine(42, '1', r, gone, 1000);
    const stop = line.waitForMessage();
    const ask = line.waitForAnswer('perm_1');
    jest.advanceTimersByTime(1000);
    expect(gone).not.toHaveBeenCalled();
    r.ended.add(42);
    jest.advanceTimersByTime(3000);
    expect(gone).toHaveBeenCalledTimes(1);
    await expect(stop.outcome).resolves.toBeNull();
    await expect(ask.outcome).resolves.toBeNull();
    expect(line.signal()).toBe(false);
  });
});
