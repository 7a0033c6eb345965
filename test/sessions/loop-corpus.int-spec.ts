import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LoopDetection, LoopDetector, LoopObservation } from '../../src/sessions/loops/loop-detector';
import { DEFAULT_LOOP_THRESHOLDS } from '../../src/sessions/loops/loop-thresholds';
import { claudeActivity } from '../../src/sessions/runtimes/claude-code.runtime';
import { codexProtocol } from '../../src/sessions/runtimes/codex.runtime';
import { geminiProtocol } from '../../src/sessions/runtimes/gemini-cli.runtime';
import { opencodeProtocol } from '../../src/sessions/runtimes/opencode.runtime';
import { Turn, TurnProtocol } from '../../src/sessions/runtimes/turn-conversation';
import { SCENARIOS } from '../fixtures/loops/scenarios';

/**
 * The loop detector on a corpus of normal sessions (test/fixtures/loops/corpus, recorded by record-corpus.ts from the
 * real claude, codex, gemini and opencode against the fake model APIs): long test-and-fix cycles, reading many files,
 * repeated builds with different results, several turns, git, a flaky retry. Each recording goes through the parsers
 * the live runtimes use (what they report as activity, what ends a turn) into the detector with the default
 * thresholds and no cooldown, every observation STEP_MS after the last (the recordings ran in seconds; real work takes
 * minutes, which is what no_progress needs to be judged on). It must fire 0 times.
 */
const CORPUS = join(__dirname, '../fixtures/loops/corpus');
const STEP_MS = 20_000;
const T0 = Date.parse('2026-11-26T09:00:00Z');
const PROTOCOLS: Record<string, TurnProtocol> = { codex: codexProtocol, 'gemini-cli': geminiProtocol, opencode: opencodeProtocol };

type Line = { turn: number; event: Record<string, unknown> };
/** An observation before it is given its time. */
type Untimed = LoopObservation extends infer O ? (O extends LoopObservation ? Omit<O, 'at'> : never) : never;

/** What the live session would show its detector: the runtime's activity and its turn ends, in order. */
function replay(runtime: string, lines: Line[]): LoopObservation[] {
  const out: LoopObservation[] = [];
  let at = T0;
  const push = (o: Untimed) => out.push({ ...o, at: (at += STEP_MS) } as LoopObservation);
  if (runtime === 'claude-code') {
    for (const { event } of lines) {
      for (const a of claudeActivity(event)) push(a);
      if (event.type === 'result') push({ kind: 'turn_ended', text: typeof event.result === 'string' ? event.result : null });
    }
    return out;
  }
  const protocol = PROTOCOLS[runtime];
  for (const n of [...new Set(lines.map((l) => l.turn))]) {
    const turn = new Turn(undefined, (a) => push(a));
    for (const { event } of lines.filter((l) => l.turn === n)) protocol.read(event, turn);
    turn.ended();
    push({ kind: 'turn_ended', text: turn.result(runtime, 0, null) });
  }
  return out;
}

function detect(observations: LoopObservation[]): LoopDetection[] {
  const detector = new LoopDetector(DEFAULT_LOOP_THRESHOLDS);
  return observations.flatMap((o) => detector.observe(o, () => false) ?? []);
}

const files = readdirSync(CORPUS).filter((f) => f.endsWith('.jsonl')).sort();
const sessions = files.map((file) => {
  const [runtime, scenario] = file.replace(/\.jsonl$/, '').split('--');
  const lines = readFileSync(join(CORPUS, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
  return { file, runtime, scenario: SCENARIOS.find((s) => s.name === scenario)!, observations: replay(runtime, lines) };
});

describe('the loop detector on a corpus of normal sessions', () => {
  it('given the corpus, then it holds at least 20 sessions of all four runtimes, each a scenario of scenarios.ts', () => {
    expect(sessions.length).toBeGreaterThanOrEqual(20);
    expect(new Set(sessions.map((s) => s.runtime))).toEqual(new Set(['claude-code', 'codex', 'gemini-cli', 'opencode']));
    for (const s of sessions) expect(s.scenario).toBeDefined();
  });

  it.each(sessions.map((s) => [s.file, s]))(
    'given %s replayed through its runtime parser, then every step of its scenario is seen (a call and its result each, a turn end each) and nothing is a loop',
    (_file, s) => {
      const steps = s.scenario.turns.flat().filter((step) => !('text' in step)).length;
      const kinds = s.observations.map((o) => o.kind);
      expect(kinds.filter((k) => k === 'tool_call')).toHaveLength(steps);
      expect(kinds.filter((k) => k === 'tool_result')).toHaveLength(steps);
      expect(kinds.filter((k) => k === 'turn_ended')).toHaveLength(s.scenario.prompts.length);
      expect(detect(s.observations)).toEqual([]);
    },
  );

  it('given the same sessions with their first tool call (and its result) repeated 4 more times, then each is a loop: the replay reaches the detector', () => {
    for (const s of sessions) {
      const i = s.observations.findIndex((o) => o.kind === 'tool_call');
      const pair = s.observations.slice(i, i + 2);
      const looped = [...s.observations.slice(0, i), ...Array.from({ length: 5 }, () => pair).flat(), ...s.observations.slice(i + 2)].map((o, k) => ({ ...o, at: T0 + k * STEP_MS }));
      expect({ file: s.file, patterns: detect(looped).map((d) => d.pattern) }).toEqual({ file: s.file, patterns: expect.arrayContaining(['repeated_call']) });
    }
  });

  it('given the corpus, then its false-positive rate is 0: no detection in any session, over every observation', () => {
    const observed = sessions.reduce((n, s) => n + s.observations.length, 0);
    const fired = sessions.filter((s) => detect(s.observations).length > 0);
    expect({ sessions: sessions.length, fired: fired.map((s) => s.file) }).toEqual({ sessions: files.length, fired: [] });
    expect(observed).toBeGreaterThan(500);
  });
});
