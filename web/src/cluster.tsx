import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { errorText } from './error-text';
import { heardText, lagText, leaseText } from './cluster-format';
import type { ClusterView } from './types';

/** Heartbeats are not journaled, so the view asks again this often while it is open. */
const REFRESH_MS = 2000;

/**
 * The nodes sharing the journal (GET /api/v1/cluster): each node's state, address, last heartbeat, and the seq its
 * journal had read then with how far behind the head that was (this node's: now), and the sessions it runs; the
 * supervisor lease's holder and term.
 */
export function ClusterView() {
  const view = useSignal<ClusterView | null>(null);
  const error = useSignal<string | null>(null);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      api<ClusterView>('/cluster').then(
        (v) => {
          if (stopped) return;
          view.value = v;
          error.value = null;
        },
        (e: unknown) => void (stopped || (error.value = errorText(e))),
      );
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  const v = view.value;
  return (
    <section aria-labelledby="cluster-title">
      <h2 id="cluster-title">Cluster</h2>
      <ErrorAlert message={error.value} />
      {v === null ? (
        <p class="muted">loading…</p>
      ) : (
        <>
          <div class="card" aria-label="Supervisor lease">
            <dl class="facts">
              <dt>supervisor lease</dt>
              <dd data-lease>{leaseText(v)}</dd>
              <dt>journal head</dt>
              <dd>seq {v.head_seq.toLocaleString('en-US')}</dd>
            </dl>
            {v.shared ? null : <p class="muted">The journal is embedded (LevelDB): this node is alone. Nodes share a journal in PostgreSQL (BRAINSTEM_JOURNAL_URL).</p>}
          </div>
          <table class="events nodes" aria-label="Nodes">
            <thead>
              <tr>
                <th>node</th>
                <th>state</th>
                <th>lease</th>
                <th>address</th>
                <th>heard</th>
                <th>seq at heartbeat</th>
                <th>lag at heartbeat</th>
                <th>sessions (live / all)</th>
              </tr>
            </thead>
            <tbody>
              {v.nodes.map((n) => (
                <tr key={n.id} data-node={n.id}>
                  <td>
                    {n.id}
                    {n.self ? ' (this node)' : ''}
                  </td>
                  <td class={`node-state ${n.state}`}>{n.state}</td>
                  <td>{n.leader ? `holder, term ${v.lease?.term ?? ''}` : ''}</td>
                  <td>{n.url ?? '—'}</td>
                  <td>{heardText(n)}</td>
                  <td>{n.seq === null ? '—' : n.seq.toLocaleString('en-US')}</td>
                  <td>{lagText(n)}</td>
                  <td>
                    {n.sessions.live} / {n.sessions.total}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
