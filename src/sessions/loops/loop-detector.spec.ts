import { JsonObject } from '../session.events';
import { EVIDENCE_MAX_BYTES, LoopDetection, LoopDetector, LoopObservation } from './loop-detector';
import { LoopPattern } from './loop-pattern';
import { DEFAULT_LOOP_THRESHOLDS, LoopThresholds } from './loop-thresholds';

const T0 = Date.parse('2026-11-26T10:00:00Z');

/** A detector fed observations one second apart (unless they carry their own time); every detection it answers. */
function feed(observations: Array<Omit<LoopObservation, 'at'> & { at?: number }>, limits: Partial<LoopThresholds> = {}, quiet: (p: LoopPattern) => boolean = () => false) {
  const detector = new LoopDetector({ ...DEFAULT_LOOP_THRESHOLDS, ...limits });
  const found: LoopDetection[] = [];
  observations.forEach((o, i) => {
    const d = detector.observe({ ...o, at: o.at ?? T0 + i * 1000 } as LoopObservation, quiet);
    if (d) found.push(d);
  });
  return found;
}

const call = (tool: string, input: JsonObject, call_id: string | null = null) => ({ kind: 'tool_call' as const, call_id, tool, input });
const ok = (output = '', call_id: string | null = null) => ({ kind: 'tool_result' as const, call_id, ok: true, exit_code: 0, output });
const failed = (exit_code: number | null, output: string, call_id: string | null = null) => ({ kind: 'tool_result' as const, call_id, ok: false, exit_code, output });
const turn = (text: string | null) => ({ kind: 'turn_ended' as const, text });
const times = <T>(n: number, make: (i: number) => T[]): T[] => Array.from({ length: n }, (_, i) => make(i)).flat();

describe('loop detector', () => {
  describe('the same tool call with the same arguments N times in a row', () => {
    it('given 4 identical calls, then nothing; given the 5th, then repeated_call with the count, the start, and what came back', () => {
      const four = times(4, () => [call('Bash', { command: 'npm test' }), failed(1, 'FAIL src/a.spec.ts')]);
      expect(feed(four, { repeated_failure: 0 })).toEqual([]);
      const [d] = feed([...four, call('Bash', { command: 'npm test' })], { repeated_failure: 0 });
      expect(d).toMatchObject({ pattern: 'repeated_call', count: 5, since: T0 });
      expect(d.summary).toBe('the same tool call with the same arguments 5 times in a row; the last came back failed with exit code 1 (since 2026-11-26T10:00:00.000Z)');
      expect(d.evidence).toBe('5 × Bash {"command":"npm test"}\n→ failed with exit code 1: FAIL src/a.spec.ts');
    });

    it('given the same arguments in another key order, then it is the same call', () => {
      const calls = times(5, (i) => [call('Edit', i % 2 ? { a: 1, b: 2 } : { b: 2, a: 1 })]);
      expect(feed(calls).map((d) => d.pattern)).toEqual(['repeated_call']);
    });

    it('given a different call between, then the run starts again', () => {
      const calls = [...times(4, () => [call('Read', { file_path: 'a.ts' })]), call('Read', { file_path: 'b.ts' }), ...times(4, () => [call('Read', { file_path: 'a.ts' })])];
      expect(feed(calls)).toEqual([]);
    });

    it('given the loop goes on and the pattern is not cooling down, then each further call is answered with the growing count and the same signature', () => {
      const found = feed(times(7, () => [call('Bash', { command: 'git rebase main' })]));
      expect(found.map((d) => d.count)).toEqual([5, 6, 7]);
      expect(new Set(found.map((d) => d.signature)).size).toBe(1);
    });

    it('given the pattern is cooling down, then nothing is answered for it', () => {
      expect(feed(times(7, () => [call('Bash', { command: 'ls' })]), {}, (p) => p === 'repeated_call')).toEqual([]);
    });

    it('given calls whose arguments the runtime does not show (opaque), then they never count as repeats', () => {
      const calls = times(6, () => [{ ...call('file_change', { changes: [{ path: 'a.ts', kind: 'update' }] }), opaque: true as const }]);
      expect(feed(calls)).toEqual([]);
    });

    it('given the threshold 0, then the pattern is off', () => {
      expect(feed(times(9, () => [call('Bash', { command: 'ls' })]), { repeated_call: 0 }).map((d) => d.pattern)).not.toContain('repeated_call');
    });
  });

  describe('an A↔B alternation', () => {
    const a = call('Edit', { file_path: 'x.ts', old_string: 'foo', new_string: 'bar' });
    const b = call('Edit', { file_path: 'x.ts', old_string: 'bar', new_string: 'foo' });

    it('given A, B for 4 rounds, then alternation with 8 calls; 3 rounds and a half are not enough', () => {
      expect(feed(times(4, () => [a, b]).slice(0, 7))).toEqual([]);
      const [d] = feed(times(4, () => [a, b]));
      expect(d).toMatchObject({ pattern: 'alternation', count: 8, since: T0 });
      expect(d.summary).toContain('alternating between the same two tool calls: 8 calls (4 rounds of both)');
      expect(d.evidence).toContain('"new_string":"bar"');
      expect(d.evidence).toContain('"new_string":"foo"');
    });

    it('given a third call in the middle, then the alternation starts again', () => {
      expect(feed([...times(2, () => [a, b]), call('Bash', { command: 'npm test' }), ...times(2, () => [a, b])])).toEqual([]);
    });

    it('given the signature, then it names the pair whichever call came first', () => {
      const [ab] = feed(times(4, () => [a, b]));
      const [ba] = feed(times(4, () => [b, a]));
      expect(ab.signature).toBe(ba.signature);
    });
  });

  describe('the same command failing with the same exit code and error N times', () => {
    const build = call('Bash', { command: 'npm run build' });
    const edit = (i: number) => call('Edit', { file_path: 'src/x.ts', old_string: `v${i}`, new_string: `v${i + 1}` });

    it('given 5 identical failures with edits between, then repeated_failure naming the exit code', () => {
      const found = feed(times(5, (i) => [build, failed(2, 'src/x.ts(3,1): error TS2304: Cannot find name foo. Time: 3.2s'), edit(i)]));
      expect(found.map((d) => d.pattern)).toEqual(['repeated_failure']);
      expect(found[0]).toMatchObject({ count: 5, since: T0 + 1000 });
      expect(found[0].summary).toContain('the same call failed with exit code 2 5 times, each time with the same output, and never succeeded between');
      expect(found[0].evidence).toBe('Bash {"command":"npm run build"}\n→ failed with exit code 2: src/x.ts(3,1): error TS2304: Cannot find name foo. Time: 3.2s');
    });

    it('given the failures differ only in times and durations, then they are the same failure', () => {
      const found = feed(times(5, (i) => [build, failed(1, `[10:00:0${i}] FAIL after ${i + 1}.5s at 2026-11-26T10:00:0${i}Z pid 0x7f00ab${i}0`), edit(i)]));
      expect(found.map((d) => d.pattern)).toEqual(['repeated_failure']);
    });

    it('given a test-and-fix cycle whose failures change, then nothing', () => {
      const errors = ['3 failed, 10 passed', '2 failed, 11 passed', '2 failed, 11 passed: expected 4 got 5', '1 failed, 12 passed', '1 failed, 12 passed: timeout'];
      expect(feed(times(5, (i) => [build, failed(1, errors[i]), edit(i)]))).toEqual([]);
    });

    it('given a success between, then the count starts again', () => {
      const cycle = (i: number) => [build, failed(1, 'boom'), edit(i)];
      expect(feed([...times(3, cycle), build, ok('built'), ...times(3, (i) => cycle(i + 10))])).toEqual([]);
    });

    it('given results named by call id out of order, then each is the result of its own call', () => {
      const found = feed(times(5, (i) => [call('Bash', { command: 'make' }, `m${i}`), call('Read', { file_path: `f${i}` }, `r${i}`), ok('text', `r${i}`), failed(2, 'make: *** [all] Error 2', `m${i}`)]));
      expect(found.map((d) => d.pattern)).toEqual(['repeated_failure']);
      expect(found[0].evidence).toContain('make');
    });
  });

  describe('a turn that repeats the previous turn text', () => {
    it('given 3 turns in a row with the same text (spacing aside), then repeated_text with the text as evidence', () => {
      const found = feed([turn('I cannot find the fixture.'), turn('I cannot  find the fixture.\n'), turn('I cannot find the fixture.')]);
      expect(found).toEqual([expect.objectContaining({ pattern: 'repeated_text', count: 3, since: T0 })]);
      expect(found[0].evidence).toBe('I cannot find the fixture.');
    });

    it('given 2 in a row, or an empty turn between, then nothing', () => {
      expect(feed([turn('Done.'), turn('Done.')])).toEqual([]);
      expect(feed([turn('Done.'), turn('Done.'), turn(null), turn('Done.')])).toEqual([]);
    });
  });

  describe('no progress for a time T', () => {
    const cycle = [call('Read', { file_path: 'a.ts' }), call('Bash', { command: 'npm test' }), call('Read', { file_path: 'b.ts' })];

    it('given a worker going through the same three calls for 15 minutes, then no_progress since its last new action', () => {
      const found = feed(times(40, (i) => cycle.map((c, k) => ({ ...c, at: T0 + (i * 3 + k) * 10_000 }))));
      expect(found.length).toBeGreaterThan(0);
      expect(new Set(found.map((d) => `${d.pattern} ${d.signature} ${d.since}`))).toEqual(new Set([`no_progress ${found[0].signature} ${T0 + 20_000}`]));
      expect(found[0].summary).toMatch(/^no progress for 900 s: its last \d+ actions only repeated what it had done before/);
      expect(found[0].evidence).toContain('its latest calls:');
    });

    it('given a new call within the time, then the clock starts again', () => {
      const steps = times(40, (i) => [...cycle, ...(i % 20 === 19 ? [call('Read', { file_path: `new-${i}.ts` })] : [])]);
      expect(feed(steps.map((c, i) => ({ ...c, at: T0 + i * 10_000 })))).toEqual([]);
    });

    it('given few actions over the time (a worker waiting on a long command), then nothing', () => {
      const slow = [call('Bash', { command: 'npm ci' }), call('Bash', { command: 'npm test' }), call('Bash', { command: 'npm ci' }), call('Bash', { command: 'npm test' })];
      expect(feed(slow.map((c, i) => ({ ...c, at: T0 + i * 600_000 })), { alternation: 0 })).toEqual([]);
    });
  });

  describe('evidence', () => {
    it('given calls with huge arguments and outputs, then the evidence stays within its bound', () => {
      const big = 'x'.repeat(100_000);
      const found = feed(times(5, () => [call('Write', { file_path: 'a', content: big }), failed(1, big)]));
      expect(found.length).toBeGreaterThan(0);
      for (const d of found) expect(Buffer.byteLength(d.evidence)).toBeLessThanOrEqual(EVIDENCE_MAX_BYTES);
    });
  });
});
