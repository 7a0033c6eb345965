import { useSignal, useSignalEffect } from '@preact/signals';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { errorText } from './error-text';
import { usageTick } from './store';
import { UsageReport } from './types';
import { barWidths, formatTokens, formatUsd } from './usage-format';

type Row = UsageReport['rows'][number];
interface Reports {
  day: UsageReport;
  session: UsageReport;
  profile: UsageReport;
  brain: UsageReport;
}

/** Bars drawn at most per chart: the dearest. */
const BARS = 15;
const BAR_WIDTH = 360;
const LABEL_WIDTH = 150;
const ROW_HEIGHT = 22;

const daysAgo = (n: number): string => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

/** A horizontal bar per row, in plain SVG: its label, a bar as long as its share of the largest, its cost. */
function BarChart({ title, rows, label }: { title: string; rows: Row[]; label: (r: Row) => string }) {
  const shown = [...rows].sort((a, b) => b.cost_usd - a.cost_usd || b.tokens - a.tokens).slice(0, BARS);
  if (shown.length === 0) return <p class="muted chart">{title}: nothing spent in these days.</p>;
  const widths = barWidths(
    shown.map((r) => r.cost_usd),
    BAR_WIDTH,
  );
  const height = shown.length * ROW_HEIGHT;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg role="img" aria-label={title} viewBox={`0 0 ${LABEL_WIDTH + BAR_WIDTH + 110} ${height}`} width="100%">
        {shown.map((r, i) => (
          <g key={i} transform={`translate(0 ${i * ROW_HEIGHT})`} data-bar={label(r)}>
            <text x={LABEL_WIDTH - 6} y={ROW_HEIGHT * 0.7} text-anchor="end" class="bar-label">
              {label(r)}
            </text>
            <rect x={LABEL_WIDTH} y={3} width={widths[i]} height={ROW_HEIGHT - 6} rx={3} class="bar" />
            <text x={LABEL_WIDTH + widths[i] + 6} y={ROW_HEIGHT * 0.7} class="bar-value">
              {formatUsd(r.cost_usd, r.cost_estimated)} · {formatTokens(r.tokens)}
            </text>
          </g>
        ))}
      </svg>
      {rows.length > shown.length ? <p class="muted">and {rows.length - shown.length} more</p> : null}
    </figure>
  );
}

/**
 * What the workers and the brain spent (GET /api/v1/usage): per UTC day, per session and per profile as bar charts, and
 * the brain's own spend, over a range of days. Loaded again when usage is journaled.
 */
export function UsageView() {
  const since = useSignal(daysAgo(13));
  const until = useSignal(daysAgo(0));
  const reports = useSignal<Reports | null>(null);
  const error = useSignal<string | null>(null);
  useSignalEffect(() => {
    void usageTick.value;
    const range = `since=${since.value}&until=${until.value}`;
    const load = (group: keyof Reports) => api<UsageReport>(`/usage?group_by=${group}&${range}`);
    Promise.all([load('day'), load('session'), load('profile'), load('brain')])
      .then(([day, session, profile, brain]) => {
        reports.value = { day, session, profile, brain };
        error.value = null;
      })
      .catch((e: unknown) => (error.value = errorText(e)));
  });
  const r = reports.value;
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <div class="fields range" role="search" aria-label="Days counted">
        <label>
          From (UTC)
          <input type="date" value={since.value} onChange={(e) => (since.value = e.currentTarget.value)} />
        </label>
        <label>
          To (UTC)
          <input type="date" value={until.value} onChange={(e) => (until.value = e.currentTarget.value)} />
        </label>
      </div>
      <ErrorAlert message={error.value} />
      {r === null ? (
        <p class="muted">loading…</p>
      ) : (
        <>
          <div class="card totals" aria-label="Totals">
            <dl class="facts">
              <dt>everything</dt>
              <dd>
                {formatUsd(r.day.total.cost_usd, r.day.total.cost_estimated)} · {r.day.total.tokens.toLocaleString('en-US')} tokens
              </dd>
              <dt>the main brain</dt>
              <dd data-brain-spend>
                {formatUsd(r.brain.total.cost_usd, r.brain.total.cost_estimated)} · {r.brain.total.tokens.toLocaleString('en-US')} tokens in {r.brain.total.turns} turns
              </dd>
            </dl>
          </div>
          <table class="events days" aria-label="Per day">
            <thead>
              <tr>
                <th>day (UTC)</th>
                <th>workers</th>
                <th>main brain</th>
                <th>total</th>
                <th>tokens</th>
              </tr>
            </thead>
            <tbody>
              {r.day.rows.map((d) => {
                const row = d as Row & { day: string; workers: Row; brain: Row };
                return (
                  <tr key={row.day}>
                    <td>{row.day}</td>
                    <td>{formatUsd(row.workers.cost_usd, row.workers.cost_estimated)}</td>
                    <td>{formatUsd(row.brain.cost_usd, row.brain.cost_estimated)}</td>
                    <td>{formatUsd(row.cost_usd, row.cost_estimated)}</td>
                    <td>{formatTokens(row.tokens)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {r.day.rows.length === 0 ? <p class="muted">Nothing spent in these days.</p> : null}
          <BarChart title="Cost per session" rows={r.session.rows} label={(x) => `${String(x.alias)} ${String(x.title ?? '')}`.trim().slice(0, 22)} />
          <BarChart title="Cost per profile" rows={r.profile.rows} label={(x) => String(x.profile_id).slice(0, 22)} />
          <BarChart title="The main brain, per conversation" rows={r.brain.rows} label={(x) => (x.conversation_id ? `${String(x.conversation_id).slice(0, 8)}…` : '(unnamed)')} />
        </>
      )}
    </section>
  );
}
