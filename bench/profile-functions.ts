// node -r @swc-node/register bench/profile-functions.ts <a.cpuprofile> [--per N] [--top K] — a CPU profile's self
// time by function (name, file and line), the K costliest (default 30), in µs per item with --per N (N events, say),
// else in % of the busy time. A native frame (a hash, a LevelDB call, a builtin) is its own line, under its name.
// Then the same time by step of a journal append (bench/journal-appenders.ts): each sample goes to the step of the
// innermost frame that names one, so a native frame counts for the step that called it.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : null;
};
const per = option('--per');
const top = option('--top') ?? 30;
const file = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) as string;
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let busy = 0;
p.samples.forEach((id, i) => {
  const f = (byId.get(id) as ProfileNode).callFrame;
  const ms = (p.timeDeltas[i] ?? 0) / 1000;
  if (f.functionName === '(idle)') return;
  busy += ms;
  const name = `${f.functionName || '(anonymous)'} ${f.url ? `${basename(f.url)}:${f.lineNumber + 1}` : ''}`;
  self.set(name, (self.get(name) ?? 0) + ms);
});

/** Steps of an append, by function name and file; the first that matches a frame wins. */
const STEPS: Array<[RegExp, string]> = [
  [/^\(garbage collector\) $/, 'GC'],
  [/^\(program\) $/, 'V8 (program)'],
  [/^(chainHash|sha256) canonical-json|^(hash|oneShotDigest) /, 'hashing (sha256 per event)'],
  [/ canonical-json\.ts/, 'canonical JSON of data'],
  [/^(append|appendAll|prepare|normaliseMeta|enqueue|\(anonymous\)) event-journal\.ts:(3[0-9][0-9]|4[0-3][0-9])$/, 'append() entry: validation, meta, queueing'],
  [/^(chain|chainAfter|versionIn|lookUpVersions|prepareNext) event-journal/, 'chaining: versions, records'],
  [/^submit event-journal/, 'submit: results built during the write'],
  [/Witness|witnessWritten|^(write|wrapper) node:fs|^(writeBuffer|FSReqCallback|latin1Write) /, 'head witness (fs.write)'],
  [/^(_put|put) /, 'LevelDB batch put (native copy)'],
  [/chained-batch|abstract-level|classic-level/, 'LevelDB batch write (submission)'],
  [/^commit level\.storage|Record journal\.storage|segmentKey|addToTail/, 'segment and keys (storage.commit JS)'],
  [/^(settle|drain|resolve|inOrder|trimVersions|requeuePrepared) event-journal|^\(anonymous\) event-journal/, 'settle: answering appenders, drain loop'],
  [/journal-appenders\.ts/, 'bench loop (payload, await)'],
  [/Subject\.js|rxjs/, 'committed$ publishing'],
];
const stepOf = new Map<number, string>();
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const step = (id: number): string => {
  const known = stepOf.get(id);
  if (known !== undefined) return known;
  const f = (byId.get(id) as ProfileNode).callFrame;
  const name = `${f.functionName || '(anonymous)'} ${f.url ? `${basename(f.url)}:${f.lineNumber + 1}` : ''}`;
  const up = parent.get(id);
  const s = STEPS.find(([re]) => re.test(name))?.[1] ?? (up === undefined ? 'other' : step(up));
  stepOf.set(id, s);
  return s;
};
const bySteps = new Map<string, number>();
p.samples.forEach((id, i) => {
  if ((byId.get(id) as ProfileNode).callFrame.functionName === '(idle)') return;
  const s = step(id);
  bySteps.set(s, (bySteps.get(s) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
});
const cell = (ms: number) => (per ? `${((ms * 1000) / per).toFixed(2)} µs` : `${((ms / busy) * 100).toFixed(1)}%`).padStart(10);
for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${cell(ms)}  ${name}`);
console.log(`${cell(busy)}  busy (idle left out)\n\nby step`);
for (const [name, ms] of [...bySteps].sort((a, b) => b[1] - a[1])) console.log(`${cell(ms)}  ${name}`);
