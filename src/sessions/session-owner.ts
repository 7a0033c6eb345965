import { isUpNow } from '../cluster/node-directory.port';
import { DomainError } from '../common/domain-error';
import { SessionActor } from './session.actor';
import { SessionRegistry } from './session.registry';

/**
 * The node that owns the session, to forward a read of what only it has (session-output-reads.ts, session-worktrees.ts):
 * when it has not been heard from within its lease it is not asked, a 503 owner_unavailable names it, `kept` saying what
 * of the session stays there.
 */
export async function reachableOwner(registry: SessionRegistry, actor: SessionActor, kept: string): Promise<string> {
  const owner = registry.ownerOf(actor);
  if (await isUpNow(registry.nodes, owner)) return owner;
  throw new DomainError('owner_unavailable', `session ${actor.context.alias} runs on node ${owner}, which has not been heard from within its lease (BRAINSTEM_NODE_LEASE_TTL_S): ${kept}`, {
    node: owner,
  });
}
