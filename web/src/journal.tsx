import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useAction } from './action';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { errorText } from './error-text';
import { memo, useChunked } from './progressive';
import { EventsPage, JournalEvent, VerifyReport } from './types';

function Verify() {
  const report = useSignal<VerifyReport | null>(null);
  const { busy, error, attempt } = useAction();
  const run = async (): Promise<void> => {
    await attempt(async () => {
      report.value = await api<VerifyReport>('/journal/verify');
    });
  };
  useEffect(() => void run(), []);
  const r = report.value;
  return (
    <div class="card verify" aria-label="Journal verification">
      {r === null ? <p class="muted">{busy.value ? 'Verifying…' : ''}</p> : null}
      {r?.ok ? (
        <p role="status" class="ok">
          Chain ok: {r.checked} events checked, head seq {r.head_seq}, hash <code>{r.head_hash}</code>
        </p>
      ) : null}
      <ErrorAlert message={r && !r.ok ? `Chain broken at seq ${r.first_bad_seq ?? '?'}${r.error ? `: ${r.error}` : ''} (head seq ${r.head_seq})` : null} />
      <ErrorAlert message={error.value} />
      <button type="button" disabled={busy.value} onClick={() => void run()}>
        Verify the journal again
      </button>
    </div>
  );
}

const PAGE_SIZES = [10, 50, 200] as const;

/** An event's data, written out once opened: two hundred of them pretty-printed up front made the page wait. */
function EventData({ data }: { data: unknown }) {
  const open = useSignal(false);
  return (
    <details onToggle={(e) => (open.value = e.currentTarget.open)}>
      <summary>data</summary>
      {open.value ? <pre>{JSON.stringify(data, null, 2)}</pre> : null}
    </details>
  );
}

const EventRow = memo(function EventRow({ event: e }: { event: JournalEvent }) {
  return (
    <tr>
      <td>{e.seq}</td>
      <td>{e.at}</td>
      <td>
        <code>{e.stream}</code>
      </td>
      <td>
        <code>{e.type}</code>
      </td>
      <td>
        <EventData data={e.data} />
      </td>
    </tr>
  );
});

function Browser() {
  const stream = useSignal('');
  const type = useSignal('');
  const size = useSignal<number>(50);
  /** The after_seq of each page shown so far: the last is the current page, popping goes back. */
  const starts = useSignal<number[]>([0]);
  const page = useSignal<EventsPage | null>(null);
  const error = useSignal<string | null>(null);

  const load = async (afterSeq: number): Promise<EventsPage> => {
    const q = new URLSearchParams({ after_seq: String(afterSeq), limit: String(size.value) });
    if (stream.value.trim() !== '') q.set('stream', stream.value.trim());
    if (type.value.trim() !== '') q.set('type', type.value.trim());
    return api<EventsPage>(`/journal/events?${q.toString()}`);
  };
  const show = (nextStarts: number[]): void => {
    error.value = null;
    load(nextStarts[nextStarts.length - 1] ?? 0).then(
      (p) => {
        page.value = p;
        starts.value = nextStarts;
      },
      (e: unknown) => (error.value = errorText(e)),
    );
  };
  useEffect(() => show([0]), []);

  const p = page.value;
  // A page of up to 200 events, a chunk a frame (progressive.ts); a new page starts over.
  const rows = useChunked(p?.events.length ?? 0, p);
  return (
    <section aria-labelledby="events-title">
      <h3 id="events-title">Events</h3>
      <form
        class="fields events-filter"
        onSubmit={(e) => {
          e.preventDefault();
          show([0]);
        }}
      >
        <label>
          Stream
          <input value={stream.value} placeholder="e.g. supervision or session-cs_…" onInput={(e) => (stream.value = e.currentTarget.value)} />
        </label>
        <label>
          Type
          <input value={type.value} placeholder="e.g. session.created" onInput={(e) => (type.value = e.currentTarget.value)} />
        </label>
        <label>
          Per page
          <select value={size.value} onChange={(e) => (size.value = Number(e.currentTarget.value))}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Show the events</button>
      </form>
      <ErrorAlert message={error.value} />
      {p ? (
        <>
          <p class="muted">
            {p.events.length === 0 ? 'No event matches' : `Seq ${p.events[0]?.seq} to ${p.events[p.events.length - 1]?.seq}`} · head seq {p.head_seq}
          </p>
          <table class="events">
            <thead>
              <tr>
                <th scope="col">seq</th>
                <th scope="col">at</th>
                <th scope="col">stream</th>
                <th scope="col">type</th>
                <th scope="col">data</th>
              </tr>
            </thead>
            <tbody>
              {p.events.slice(0, rows).map((e) => (
                <EventRow key={e.seq} event={e} />
              ))}
            </tbody>
          </table>
          <div class="actions">
            <button type="button" disabled={starts.value.length <= 1} onClick={() => show(starts.value.slice(0, -1))}>
              Previous page
            </button>
            <button type="button" disabled={p.next_after_seq === null} onClick={() => p.next_after_seq !== null && show([...starts.value, p.next_after_seq])}>
              Next page
            </button>
          </div>
        </>
      ) : null}
    </section>
  );
}

/** The journal: whether its hash chain holds, and its events by stream and type, a page at a time. */
export function JournalView() {
  return (
    <section aria-labelledby="journal-title">
      <h2 id="journal-title">Journal</h2>
      <Verify />
      <Browser />
    </section>
  );
}
