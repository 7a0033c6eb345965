import type { ScenarioReport, Spread } from './scenario-metrics';

export interface TableColumn {
  label: string;
  report: ScenarioReport;
  settled: boolean;
  elapsed_ms: number;
}

const n = (x: number) => (Number.isFinite(x) ? String(Math.round(x)) : '-');
const ms = (s: Spread) => `${n(s.p50)} / ${n(s.p99)} ms`;
const tok = (s: Spread) => `${n(s.p50)} / ${n(s.p99)}`;
const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-');

/** The bench's table: a column per run (this checkout first, then the baseline), the lower bound, the ratios and the targets. */
export function printTable(columns: readonly TableColumn[]): void {
  const rows: Array<[string, (r: ScenarioReport) => string]> = [
    ['rounds (completed/interrupted/…)', (r) => `${r.rounds} (${Object.entries(r.rounds_by_status).map(([k, v]) => `${k} ${v}`).join(', ')})`],
    ['stale facts (must be 0)', (r) => n(r.stale_facts)],
    ['rounds with nothing to act on', (r) => `${r.nothing_to_act_on} (${pct(r.nothing_to_act_on / r.rounds)})`],
    ['permissions shown with id and input', (r) => `${r.permissions_shown} of ${r.permissions_in_rounds}`],
    ['brain fresh (uncached) input/round p50/p99', (r) => tok(r.fresh_per_round)],
    ['  of which written to the cache p50/p99', (r) => tok(r.cache_write_per_round)],
    ['brain cache-read tokens/round p50/p99', (r) => tok(r.cache_read_per_round)],
    ['brain output tokens/round p50/p99', (r) => tok(r.output_per_round)],
    ['lower bound: facts tokens/round p50/p99', (r) => tok(r.facts_per_round)],
    ['run: fresh (of it written) / cache-read', (r) => `${n(r.total.fresh)} (${n(r.total.cache_write)}) / ${n(r.total.cache_read)}`],
    ['run: output tokens; facts tokens', (r) => `${n(r.total.output)}; ${n(r.total.facts)}`],
    ['run: estimated dollars', (r) => `$${r.total.dollars.toFixed(4)}`],
    ['input read from cache over the run', (r) => pct(r.cache_read_share)],
    ['trigger → round.started p50/p99', (r) => ms(r.latency.to_round)],
    ["trigger → brain's first tool call", (r) => ms(r.latency.to_first_call)],
    ['trigger → worker going on', (r) => ms(r.latency.to_going_on)],
    ['round.started → prompt to brain (svc)', (r) => ms(r.latency.round_to_delivery)],
    ['round.started → prompt at model API', (r) => ms(r.latency.round_to_api)],
    ['triggers; attention lost (must be 0)', (r) => `${r.triggers}; ${r.attention_lost}`],
    ['reached the person: confirmations; notices', (r) => `${r.confirmations}; ${r.notices}`],
    ['worktrees merged', (r) => n(r.merges)],
    ['model limits: parked; resumed by itself', (r) => `${r.limits.parked}; ${r.limits.resumed_by_itself}`],
    ['  rounds a limit woke', (r) => n(r.limits.rounds_woken)],
    ["brain's model (as claude asked)", (r) => r.models.join(', ')],
  ];
  const width = 44;
  const colWidth = Math.max(26, ...columns.map((c) => c.label.length + 2));
  console.log(`\n${''.padEnd(width)}${columns.map((c) => c.label.padEnd(colWidth)).join('')}`);
  for (const [name, cell] of rows) console.log(`${name.padEnd(width)}${columns.map((c) => cell(c.report).padEnd(colWidth)).join('')}`);
  console.log(`${'settled; wall time'.padEnd(width)}${columns.map((c) => `${c.settled ? 'yes' : 'NO (deadline)'}; ${(c.elapsed_ms / 1000).toFixed(0)} s`.padEnd(colWidth)).join('')}`);
  for (const c of columns) {
    for (const x of c.report.stale_examples) console.log(`  stale (${c.label}): ${x}`);
    for (const x of c.report.nothing_examples) console.log(`  nothing to act on (${c.label}): ${x}`);
    for (const x of c.report.lost_examples) console.log(`  lost (${c.label}): ${x}`);
  }
  const [mine, base] = columns;
  const r = mine.report;
  const ratio = (a: number, b: number) => (b > 0 ? `${(100 * (a / b)).toFixed(1)}%` : '-');
  console.log('\nratios');
  console.log(`  fresh input/round p50, this checkout vs lower bound (facts): ${ratio(r.fresh_per_round.p50, r.facts_per_round.p50)}`);
  if (base) {
    const b = base.report;
    console.log(`  fresh input/round p50, this checkout vs baseline: ${ratio(r.fresh_per_round.p50, b.fresh_per_round.p50)} (p99 ${ratio(r.fresh_per_round.p99, b.fresh_per_round.p99)})`);
    console.log(`  fresh input over the run, this checkout vs baseline: ${ratio(r.total.fresh, b.total.fresh)}`);
    console.log(`  all input over the run, this checkout vs baseline: ${ratio(r.total.fresh + r.total.cache_read, b.total.fresh + b.total.cache_read)}`);
    console.log(`  dollars, this checkout vs baseline: ${ratio(r.total.dollars, b.total.dollars)}`);
  }
  const met = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  console.log('\ntargets (this checkout)');
  console.log(`  0 stale facts: ${met(r.stale_facts === 0)}; 0 attention lost: ${met(r.attention_lost === 0)}`);
  console.log(`  every permission shown with its input and id: ${met(r.permissions_shown === r.permissions_in_rounds)}`);
  if (base) console.log(`  fresh input/round ≤ 30% of the baseline's (p50): ${met(r.fresh_per_round.p50 <= 0.3 * base.report.fresh_per_round.p50)}`);
  console.log(`  ≥ 80% of input read from cache: ${met(r.cache_read_share >= 0.8)}`);
  console.log(`  ≤ 5% rounds with nothing to act on: ${met(r.nothing_to_act_on <= 0.05 * r.rounds)}`);
  console.log(`  round.started → prompt delivered p99 ≤ 50 ms: ${met(r.latency.round_to_delivery.p99 <= 50)}`);
}
