/** The nodes sharing the journal, as far as this node knows: which one is itself, and which are up. */
export interface NodeDirectory {
  readonly self: string;
  /** Whether the node answers (it was heard from within the lease time); this node always is. */
  isUp(node: string): boolean;
  /** Hears from the nodes now rather than at the next periodic read (before a node is judged down for a command). */
  refresh(): Promise<void>;
  /** The other nodes that are up, each with how many clients followed the rounds stream there at its last heartbeat. */
  roundFollowers(): ReadonlyMap<string, number>;
  /** Where this node's own count comes from, told to the others with each heartbeat (supervision sets it). */
  reportRoundListeners(count: () => number): void;
}

export const NODE_DIRECTORY = Symbol('NODE_DIRECTORY');

/** A node alone on its journal (the embedded one): only itself, always up. */
export const soleNode = (self: string): NodeDirectory => ({ self, isUp: (node) => node === self, refresh: () => Promise.resolve(), roundFollowers: () => new Map(), reportRoundListeners: () => undefined });

/** Whether the node is up, heard again first when the last periodic read says it is not (it may have just joined). */
export async function isUpNow(nodes: NodeDirectory, node: string): Promise<boolean> {
  if (!nodes.isUp(node)) await nodes.refresh().catch(() => undefined);
  return nodes.isUp(node);
}
