import { SessionView } from './session-directory.port';
import { RestoreInput, decideRestore, recoverableWorkers, roundAtTakeover } from './supervision-restore';

const base: RestoreInput = { now: 1_000_000, last_seen_at: 1_000_000 - 60_000, restore_ttl_s: 900, was_enabled: true, recoverable_supervised_workers: 1 };

describe('restore after restart', () => {
  it('restores within the TTL when a supervised worker survived', () => {
    expect(decideRestore(base)).toEqual({ restore: true });
  });

  it('does not restore a snapshot as old as the TTL or older', () => {
    expect(decideRestore({ ...base, last_seen_at: base.now - 900_000 })).toEqual({ restore: false, reason: 'restore_expired' });
    expect(decideRestore({ ...base, restore_ttl_s: 1, last_seen_at: base.now - 2000 })).toEqual({ restore: false, reason: 'restore_expired' });
  });

  it('does not restore without a recoverable supervised worker', () => {
    expect(decideRestore({ ...base, recoverable_supervised_workers: 0 })).toEqual({ restore: false, reason: 'no_recoverable_worker' });
  });

  it('has nothing to restore when supervision was off', () => {
    expect(decideRestore({ ...base, was_enabled: false })).toEqual({ restore: false, reason: 'not_enabled' });
  });
});

describe('supervised workers alive on any node', () => {
  const session = (over: Partial<SessionView>): SessionView => ({
    id: 'cs_1',
    alias: 'w1',
    state: 'idle',
    state_since: 0,
    excluded: false,
    active: true,
    recoverable: true,
    last_result: null,
    waiting_on: null,
    attention_since: 0,
    ...over,
  });
  const nodes = { self: 'b', isUp: (n: string) => n === 'b' || n === 'c' };

  it('given this node s own workers, then those that survived count', () => {
    expect(recoverableWorkers([session({}), session({ node: 'b' }), session({ recoverable: false, active: false })], nodes)).toBe(2);
  });

  it('given workers of other nodes, then those not exited on a node that is up count, and those on a dead node do not', () => {
    expect(recoverableWorkers([session({ node: 'c', recoverable: false }), session({ node: 'a' }), session({ node: 'c', active: false })], nodes)).toBe(1);
  });

  it('given excluded workers, then they do not count wherever they run', () => {
    expect(recoverableWorkers([session({ excluded: true }), session({ node: 'c', excluded: true })], nodes)).toBe(0);
  });
});

describe('the round in flight when a node takes the lease', () => {
  const none = { self: 0, others: new Map<string, number>() };
  const stream = { node: 'a', driver: 'stream' };

  it('Given a stream round and a brain following the rounds stream on this node or another live one, Then it is kept', () => {
    expect(roundAtTakeover(stream, 'failover', { self: 1, others: new Map() })).toBeNull();
    expect(roundAtTakeover(stream, 'failover', { self: 0, others: new Map([['c', 2]]) })).toBeNull();
    expect(roundAtTakeover(stream, 'boot', { self: 0, others: new Map([['c', 1]]) })).toBeNull();
  });

  it('Given a stream round whose followers were only on the node that ran it (it lost the lease), Then it is cut off', () => {
    expect(roundAtTakeover(stream, 'failover', { self: 0, others: new Map([['a', 3], ['c', 0]]) })).toBe('leader_lost');
  });

  it('Given no one following, Then it is cut off: as a restart at boot, as a lost leader at failover', () => {
    expect(roundAtTakeover(stream, 'boot', none)).toBe('restart');
    expect(roundAtTakeover(stream, 'failover', none)).toBe('leader_lost');
  });

  it('Given a round of a hosted brain, a command or a webhook, or one journaled before its driver was, Then it is cut off whoever follows the stream', () => {
    for (const driver of ['claude-code', 'command', 'webhook', undefined]) {
      expect(roundAtTakeover({ node: 'a', driver }, 'failover', { self: 1, others: new Map([['c', 1]]) })).toBe('leader_lost');
    }
  });
});
