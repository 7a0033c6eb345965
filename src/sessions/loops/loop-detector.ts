import { WorkerActivity } from '../runtimes/runtime.port';
import { LoopPattern } from './loop-pattern';
import { canonicalJson, clipBytes, digest, normalText, outputDigest } from './loop-text';
import { LoopThresholds, NO_PROGRESS_MIN_ACTIONS } from './loop-thresholds';

/**
 * What the detector is shown of one worker, in order: what its runtime's stream said it did (a tool call, what came
 * back: WorkerActivity), and what its session recorded (a turn's end, a progress report). An `opaque` call (its
 * arguments not shown) never counts as a repeat.
 */
export type LoopObservation =
  | (WorkerActivity & { at: number })
  | { kind: 'turn_ended'; at: number; text: string | null }
  | { kind: 'progress'; at: number; message: string | null };

/**
 * A loop found: its pattern, how many times it went round, since when (epoch ms), a signature that is the same as long
 * as it is the same loop, Brainstem's summary (its own words, no worker text) and the evidence (worker text, at most
 * EVIDENCE_MAX_BYTES: what was tried and what came back), which whoever shows it must quote as data.
 */
export interface LoopDetection {
  pattern: LoopPattern;
  count: number;
  since: number;
  signature: string;
  summary: string;
  evidence: string;
}

/** The most a detection carries of the worker's own text, in bytes of UTF-8. */
export const EVIDENCE_MAX_BYTES = 2048;

interface Call {
  sig: string;
  tool: string;
  /** The arguments as canonical JSON (evidence only). */
  json: string;
  at: number;
}

interface Result {
  ok: boolean;
  exit_code: number | null;
  output: string;
}

interface Failure extends Result {
  call: Call;
  digest: string;
  count: number;
  since: number;
}

/** Calls waiting for their result, failures tracked and distinct calls remembered: bounded, oldest dropped first. */
const PENDING_MAX = 64;
const FAILURES_MAX = 64;
const SEEN_MAX = 256;
/** Calls kept for the evidence of no progress. */
const RECENT_CALLS = 4;

const iso = (at: number): string => new Date(at).toISOString();

function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
}

function outcome(r: Result): string {
  if (r.ok) return 'ok';
  return r.exit_code === null ? 'failed' : `failed with exit code ${r.exit_code}`;
}

const callText = (c: Call): string => `${c.tool} ${clipBytes(c.json, 700)}`;
const resultText = (r: Result): string => `→ ${outcome(r)}${r.output ? `: ${clipBytes(r.output, 600)}` : ''}`;

/**
 * One worker's loop detector. Pure: no clock (every observation carries its time), no I/O; it keeps only what the
 * patterns need (the current runs, a bounded set of recent calls and failures), so each observation costs a few
 * microseconds. `observe` answers a detection when a pattern's threshold is reached and the pattern is not cooling
 * down (`quiet`), else null; a loop that goes on is answered again at each observation until its cooldown starts.
 */
export class LoopDetector {
  private last: Call | null = null;
  private prev: Call | null = null;
  private lastResult: Result | null = null;
  /** Identical calls in a row, ending with `last`. */
  private run = { count: 0, since: 0 };
  /** Calls alternating between two (…, prev, last), ending with `last`. */
  private alt = { count: 0, since: 0 };
  private readonly pending = new Map<string, Call>();
  private readonly failures = new Map<string, Failure>();
  private turnText: string | null = null;
  private turnRun = { count: 0, since: 0 };
  private readonly seen = new Map<string, true>();
  private readonly recent: Call[] = [];
  private lastNovel: number | null = null;
  private stale = 0;
  private progressMessage: string | null = null;
  private opaqueCalls = 0;

  constructor(private readonly limits: LoopThresholds) {}

  observe(o: LoopObservation, quiet: (pattern: LoopPattern) => boolean): LoopDetection | null {
    switch (o.kind) {
      case 'tool_call':
        return this.call(o, quiet);
      case 'tool_result':
        return this.result(o, quiet);
      case 'turn_ended':
        return this.turn(o.at, o.text, quiet);
      case 'progress':
        if (o.message !== this.progressMessage) this.novel(o.at);
        this.progressMessage = o.message;
        return null;
    }
  }

  private novel(at: number): void {
    this.lastNovel = at;
    this.stale = 0;
  }

  private call(o: Extract<LoopObservation, { kind: 'tool_call' }>, quiet: (p: LoopPattern) => boolean): LoopDetection | null {
    const json = o.opaque ? '' : canonicalJson(o.input);
    const sig = o.opaque ? `opaque:${++this.opaqueCalls}` : digest(`${o.tool}\u0000${json}`);
    const call: Call = { sig, tool: o.tool, json, at: o.at };
    const last = this.last;
    if (last !== null && last.sig === sig) this.run.count++;
    else this.run = { count: 1, since: o.at };
    if (last === null || last.sig === sig) this.alt = { count: 1, since: o.at };
    else if (this.prev !== null && this.prev.sig === sig && this.alt.count >= 2) this.alt.count++;
    else this.alt = { count: 2, since: last.at };
    const novel = !this.seen.has(sig);
    remember(this.seen, sig, true, SEEN_MAX);
    if (novel) this.novel(o.at);
    else this.stale++;
    this.prev = last;
    this.last = call;
    if (last?.sig !== sig) this.lastResult = null;
    if (o.call_id !== null) remember(this.pending, o.call_id, call, PENDING_MAX);
    this.recent.push(call);
    if (this.recent.length > RECENT_CALLS) this.recent.shift();
    if (o.opaque) return null;
    const { repeated_call: n, alternation: rounds } = this.limits;
    if (n > 0 && this.run.count >= n && !quiet('repeated_call')) return this.repeatedCall(call);
    if (rounds > 0 && this.alt.count >= 2 * rounds && this.prev !== null && !quiet('alternation')) return this.alternation(this.prev, call);
    return novel ? null : this.noProgress(o.at, quiet);
  }

  private result(o: Extract<LoopObservation, { kind: 'tool_result' }>, quiet: (p: LoopPattern) => boolean): LoopDetection | null {
    const pending = o.call_id === null ? undefined : this.pending.get(o.call_id);
    if (pending !== undefined) this.pending.delete(o.call_id as string);
    const call = pending ?? this.last;
    if (call === null) return null;
    const result: Result = { ok: o.ok, exit_code: o.exit_code, output: o.output };
    if (call === this.last) this.lastResult = result;
    if (o.ok) {
      this.failures.delete(call.sig);
      return null;
    }
    const d = `${o.exit_code}:${outputDigest(o.output)}`;
    const known = this.failures.get(call.sig);
    const failure: Failure = known !== undefined && known.digest === d ? { ...known, ...result, count: known.count + 1 } : { ...result, call, digest: d, count: 1, since: o.at };
    remember(this.failures, call.sig, failure, FAILURES_MAX);
    const n = this.limits.repeated_failure;
    return n > 0 && failure.count >= n && !quiet('repeated_failure') ? this.repeatedFailure(failure) : null;
  }

  private turn(at: number, text: string | null, quiet: (p: LoopPattern) => boolean): LoopDetection | null {
    const t = text === null ? '' : normalText(text);
    if (t === '') {
      this.turnText = null;
      this.turnRun = { count: 0, since: at };
      return null;
    }
    if (t === this.turnText) {
      this.turnRun.count++;
      this.stale++;
    } else {
      this.turnText = t;
      this.turnRun = { count: 1, since: at };
      this.novel(at);
    }
    const n = this.limits.repeated_text;
    if (n > 0 && this.turnRun.count >= n && !quiet('repeated_text')) {
      return this.detection('repeated_text', this.turnRun.count, this.turnRun.since, digest(t), `${this.turnRun.count} turns in a row ended with the same text`, clipBytes(text as string, 1800));
    }
    return this.turnRun.count > 1 ? this.noProgress(at, quiet) : null;
  }

  private noProgress(at: number, quiet: (p: LoopPattern) => boolean): LoopDetection | null {
    const t = this.limits.no_progress_s;
    const since = this.lastNovel;
    if (t <= 0 || since === null || at - since < t * 1000 || this.stale < NO_PROGRESS_MIN_ACTIONS || quiet('no_progress')) return null;
    const secs = Math.floor((at - since) / 1000);
    return this.detection(
      'no_progress',
      this.stale,
      since,
      digest(`no_progress:${since}`),
      `no progress for ${secs} s: its last ${this.stale} actions only repeated what it had done before`,
      ['its latest calls:', ...this.recent.map(callText)].join('\n'),
    );
  }

  private repeatedCall(call: Call): LoopDetection {
    const { count, since } = this.run;
    const r = this.lastResult;
    return this.detection(
      'repeated_call',
      count,
      since,
      call.sig,
      `the same tool call with the same arguments ${count} times in a row${r ? `; the last came back ${outcome(r)}` : ''}`,
      [`${count} × ${callText(call)}`, ...(r ? [resultText(r)] : [])].join('\n'),
    );
  }

  private alternation(a: Call, b: Call): LoopDetection {
    const { count, since } = this.alt;
    return this.detection(
      'alternation',
      count,
      since,
      digest([a.sig, b.sig].sort().join('|')),
      `alternating between the same two tool calls: ${count} calls (${Math.floor(count / 2)} rounds of both)`,
      [`A: ${callText(a)}`, `B: ${callText(b)}`].join('\n'),
    );
  }

  private repeatedFailure(f: Failure): LoopDetection {
    return this.detection(
      'repeated_failure',
      f.count,
      f.since,
      digest(`${f.call.sig}|${f.digest}`),
      `the same call ${outcome(f)} ${f.count} times, each time with the same output, and never succeeded between`,
      [callText(f.call), resultText(f)].join('\n'),
    );
  }

  private detection(pattern: LoopPattern, count: number, since: number, signature: string, summary: string, evidence: string): LoopDetection {
    return { pattern, count, since, signature, summary: `${summary} (since ${iso(since)})`, evidence: clipBytes(evidence, EVIDENCE_MAX_BYTES) };
  }
}
