// node -r @swc-node/register bench/profile-summary.ts <a.cpuprofile> [b.cpuprofile] [--per N] — a CPU profile's self
// time by category (bench/README.md, The signal path, profiled). Each sample goes to the category of the innermost
// frame whose file names one (a native frame, such as a hash or a socket write, to the code that called it); garbage
// collection, idle and V8's own time are their own. With two profiles, side by side; with --per N, in µs per item
// (N signals, say) rather than in % of the busy time.
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const CATEGORIES: Array<[RegExp, string]> = [
  [/xstate/, 'xstate'],
  [/class-validator|class-transformer|validator\/lib|src\/common\/(dto-check|validation-)/, 'validation'],
  [/src\/http\/json-body|secure-json-parse|content-type-parser|inherited-key/, 'body parsing'],
  [/fast-json-stringify|\/serializer|reply\.js serialize$/, 'serialization'],
  [/src\/journal|classic-level|abstract-level|level-transcoder|module-error/, 'journal (append, group commit, LevelDB)'],
  [/src\/auth/, 'auth (hook, guard, credentials)'],
  [/src\/logging|pino/, 'logging, request context'],
  [/src\/sessions\/loops/, 'loop detection'],
  [/session-spending|src\/usage/, 'usage, budgets'],
  [/session\.status|session-warnings/, 'status building'],
  [/src\/sessions\/session\.(machine|transitions|context|decider)|session-create\.decider/, 'session machine, deciders'],
  [/src\/sessions|src\/common/, 'sessions service, commands, registry'],
  [/src\/bus|rxjs/, 'bus'],
  [/src\/(supervision|notifications|workflows|main-brain|cluster)/, 'subscribers (supervision, …)'],
  [/@nestjs/, 'Nest (router, guards, pipes)'],
  [/fastify|find-my-way|avvio|light-my-request|toad-cache|fast-querystring/, 'Fastify'],
  [/async_hooks/, 'async_hooks (AsyncLocalStorage)'],
  [/node:_http|node:net|stream_base_commons|node:internal\/streams|_http_/, 'node http, sockets'],
  [/bench\//, 'bench harness'],
];
const OWN = new Map([
  ['(garbage collector)', 'garbage collection'],
  ['(idle)', 'idle'],
  ['(program)', 'V8 (program)'],
]);

function categories(file: string): { busy: number; idle: number; by: Map<string, number> } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string>();
  const categoryOf = (id: number): string => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const f = (byId.get(id) as ProfileNode).callFrame;
    const up = parent.get(id);
    const c = OWN.get(f.functionName) ?? (f.url ? CATEGORIES.find(([re]) => re.test(`${f.url} ${f.functionName}`))?.[1] : undefined) ?? (up === undefined ? 'other' : categoryOf(up));
    memo.set(id, c);
    return c;
  };
  const by = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const c = categoryOf(id);
    by.set(c, (by.get(c) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  });
  const idle = by.get('idle') ?? 0;
  by.delete('idle');
  return { busy: [...by.values()].reduce((a, b) => a + b, 0), idle, by };
}

const args = process.argv.slice(2);
const perAt = args.indexOf('--per');
const per = perAt >= 0 ? Number(args[perAt + 1]) : null;
const files = args.filter((a, i) => !a.startsWith('--') && (perAt < 0 || i !== perAt + 1));
const profiles = files.map(categories);
const cell = (ms: number, busy: number) => (per ? `${((ms * 1000) / per).toFixed(1)} µs` : `${((ms / busy) * 100).toFixed(1)}%`).padStart(10);
const names = [...new Set(profiles.flatMap((p) => [...p.by.keys()]))].sort((a, b) => (profiles[0].by.get(b) ?? 0) - (profiles[0].by.get(a) ?? 0));
console.log(`${'category'.padEnd(42)}${files.map((_, i) => `profile ${i + 1}`.padStart(10)).join('')}`);
for (const n of names) console.log(`${n.padEnd(42)}${profiles.map((p) => cell(p.by.get(n) ?? 0, p.busy)).join('')}`);
console.log(`${'busy (idle left out)'.padEnd(42)}${profiles.map((p) => cell(p.busy, p.busy)).join('')}`);
console.log(`${'idle, % of the time sampled'.padEnd(42)}${profiles.map((p) => `${((p.idle / (p.idle + p.busy)) * 100).toFixed(1)}%`.padStart(10)).join('')}`);
