import { RestoreInput, decideRestore } from './supervision-restore';

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
