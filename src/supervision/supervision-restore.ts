import { NodeDirectory } from '../cluster/node-directory.port';
import { SessionView } from './session-directory.port';
import { RoundInFlight, RoundInterruption } from './supervision.machine';

/** How a node came to lead: as the one process restarting (boot), or taking over from another node (failover). */
export type LeadHow = 'boot' | 'failover';

/** Who follows the rounds stream: clients on this node now, and on each other node up, as it last heartbeat. */
export interface RoundFollowers {
  self: number;
  others: ReadonlyMap<string, number>;
}

export interface RestoreInput {
  now: number;
  /** When the journaled supervision state was last known current (epoch ms): its snapshot's age is measured from here. */
  last_seen_at: number;
  restore_ttl_s: number;
  /** Supervision was on when the service went down. */
  was_enabled: boolean;
  /** Supervised workers that survived the restart (alive with the same start time, or resumable). */
  recoverable_supervised_workers: number;
}

export type RestoreDecision = { restore: true } | { restore: false; reason: 'not_enabled' | 'restore_expired' | 'no_recoverable_worker' };

/** Seed: restored only when the snapshot is fresher than the TTL and a recoverable worker exists. */
export function decideRestore(input: RestoreInput): RestoreDecision {
  if (!input.was_enabled) return { restore: false, reason: 'not_enabled' };
  if (input.now - input.last_seen_at >= input.restore_ttl_s * 1000) return { restore: false, reason: 'restore_expired' };
  if (input.recoverable_supervised_workers === 0) return { restore: false, reason: 'no_recoverable_worker' };
  return { restore: true };
}

/**
 * The supervised workers alive on any node: one of this node's that survived (recoverable), or one of another node's
 * that has not exited while its node is up. A session without an owner node is this node's.
 */
export function recoverableWorkers(sessions: readonly SessionView[], nodes: Pick<NodeDirectory, 'self' | 'isUp'>): number {
  const alive = (s: SessionView) => (s.node === undefined || s.node === nodes.self ? s.recoverable : s.active && nodes.isUp(s.node));
  return sessions.filter((s) => s.active && !s.excluded && alive(s)).length;
}

/**
 * What a node taking the lease does with the round in flight. A brain the user brings (the stream driver) that follows
 * the rounds stream on a live node still drives it: it is kept, its deadline re-armed. The node that ran the round does
 * not count, whatever its last heartbeat said: it lost the lease, so it is gone or stale. Any other round has no one
 * left to drive it (a hosted brain, a command or a webhook's delivery ran on the node that lost it; a round journaled
 * before its driver was recorded): it is cut off, as a restart (boot) or as a lost leader (failover).
 */
export function roundAtTakeover(round: Pick<RoundInFlight, 'node' | 'driver'>, how: LeadHow, followers: RoundFollowers): Exclude<RoundInterruption, 'supervision_closed'> | null {
  const elsewhere = [...followers.others].some(([node, n]) => node !== round.node && n > 0);
  if (round.driver === 'stream' && (followers.self > 0 || elsewhere)) return null;
  return how === 'boot' ? 'restart' : 'leader_lost';
}
