import { ClusterReader } from '../cluster/node-peers.port';
import { Journal } from '../journal/journal.port';
import { SessionDirectory } from '../supervision/session-directory.port';
import { ClusterView, clusterView } from './cluster-view';

/** The cluster as this node sees it: the database's rows of the nodes and the lease, and the sessions it follows. */
export class NodesService {
  constructor(
    private readonly reader: ClusterReader,
    private readonly sessions: Pick<SessionDirectory, 'list'>,
    private readonly journal: Pick<Journal, 'head'>,
    private readonly settings: { self: string; shared: boolean; leaseTtlMs: number },
  ) {}

  async view(): Promise<ClusterView> {
    const record = await this.reader.read();
    return clusterView({ ...this.settings, record, ownSeq: this.journal.head().seq, sessions: this.sessions.list() });
  }
}
