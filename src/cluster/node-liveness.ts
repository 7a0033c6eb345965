/**
 * Which nodes were heard from lately, pure: a read of the nodes' table reports each node's silence (how long since
 * its last heartbeat, by the database's clock), kept here against this node's clock; a node is up while that
 * silence, aged since the read, is within the lease time.
 */
export class NodeLiveness {
  /** When (on this node's clock) each node last heartbeat, as of the latest read. */
  private readonly heardAt = new Map<string, number>();

  constructor(
    readonly self: string,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** A read of the table: each node with the milliseconds since its heartbeat, measured when the read ran. */
  heard(silences: ReadonlyArray<{ node: string; silentMs: number }>): void {
    const at = this.now();
    this.heardAt.clear();
    for (const { node, silentMs } of silences) this.heardAt.set(node, at - Math.max(0, silentMs));
  }

  isUp(node: string): boolean {
    if (node === this.self) return true;
    const at = this.heardAt.get(node);
    return at !== undefined && this.now() - at < this.ttlMs;
  }

  /** The nodes known, each with whether it is up, in id order. */
  nodes(): Array<{ node: string; up: boolean }> {
    return [...new Set([this.self, ...this.heardAt.keys()])].sort().map((node) => ({ node, up: this.isUp(node) }));
  }
}
