// npm run bench:profiles [profiles] — 1,000 profiles on disk: cold and warm lists, the list over HTTP with the user's
// credential, lint-all and a PATCH each, against raw fs + YAML in the same run. Prints figures and the cold lists'
// ratio to the raw read and parse; throws on any HTTP answer but 200.
import { open, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { load } from 'js-yaml';
import { openLevelJournal } from '../src/journal/journal.factory';
import { EventJournal } from '../src/journal/event-journal';
import { normalizeDocument } from '../src/profiles/profile.schema';
import { FsProfileStore } from '../src/profiles/profile.store';
import { dumpProfileYaml } from '../src/profiles/profile.yaml';
import { ProfilesService } from '../src/profiles/profiles.service';
import { BUILTIN_TEMPLATES } from '../src/profiles/templates';
import { tempDir } from '../test/support/temp-dir';
import { gc } from './gc';
import { startTestApp } from '../test/support/test-app';

const PROFILES = Number(process.argv[2] ?? 1000);
const LIST_RUNS = 50;
const COLD_RUNS = 11;
const LINT_RUNS = 10;
/** The target: a cold list takes at most this many times the raw read and parse of the same files. */
const COLD_RATIO_TARGET = 3;

/** Realistic documents: a built-in's prompt and tools plus an MCP server and a hook each (about 2.4 KiB). */
function profileYaml(i: number): string {
  const base = BUILTIN_TEMPLATES[i % BUILTIN_TEMPLATES.length].doc;
  return dumpProfileYaml(
    normalizeDocument({
      ...base,
      name: `Bench Profile ${i}`,
      tools: { ...base.tools, mcp_servers: { github: { type: 'stdio', command: 'github-mcp', env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } } } },
      hooks: { PreToolUse: [{ type: 'command', command: './guard.sh', matcher: 'Bash', timeout: 30 }] },
    }),
  );
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function sample(runs: number, fn: (i: number) => Promise<unknown>, before?: (i: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    await before?.(i);
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

function report(label: string, samples: number[]): number {
  const f = (n: number) => n.toFixed(2).padStart(9);
  console.log(`${label.padEnd(58)} p50 ${f(percentile(samples, 50))} ms   p99 ${f(percentile(samples, 99))} ms   (n=${samples.length})`);
  return percentile(samples, 50);
}

function ratio(label: string, cold: number, raw: number): void {
  const r = cold / raw;
  console.log(`${label.padEnd(58)} ${r.toFixed(2)}× the raw read and parse (target ≤ ${COLD_RATIO_TARGET}×: ${r <= COLD_RATIO_TARGET ? 'met' : 'NOT met'})`);
}

async function rawReadAll(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.yaml'));
  await Promise.all(names.map(async (n) => load(await readFile(join(dir, n), 'utf8'))));
}

async function rawAtomicWrite(dir: string, i: number, text: string): Promise<void> {
  const temp = join(dir, `.raw-${i}.tmp`);
  const handle = await open(temp, 'w');
  await handle.writeFile(text);
  await handle.datasync();
  await handle.close();
  await rename(temp, join(dir, `raw-${i % 50}.yaml`));
}

async function main(): Promise<void> {
  const root = tempDir('bench-profiles-');
  const dir = join(root.path, 'profiles');
  const stateFile = join(dir, '.brainstem-profiles.json');
  mkdirSync(dir);
  const texts = Array.from({ length: PROFILES }, (_, i) => profileYaml(i));
  await Promise.all(texts.map((text, i) => writeFile(join(dir, `bench-${String(i).padStart(4, '0')}.yaml`), text)));
  const bytes = texts.reduce((n, t) => n + t.length, 0);
  console.log(`${PROFILES} profiles on disk, ${(bytes / PROFILES / 1024).toFixed(1)} KiB each on average; LevelDB journal, fsync on\n`);

  report('raw: readdir + readFile + yaml load (baseline)', await sample(LIST_RUNS, () => rawReadAll(dir)));

  // A cold list: a new service loads (journal, then files) and answers its first list. Each cold run follows a raw
  // read and parse of the same files, both after a full collection, so both see the same machine and a settled heap;
  // the ratio is of their medians. Between runs the service stops gracefully (it snapshots its catalogue).
  let journal: EventJournal | null = null;
  let running: ProfilesService | null = null;
  const service = (j: EventJournal) => new ProfilesService(new FsProfileStore(dir), j, () => new Date(), { home: homedir() });
  const rawBeside: number[] = [];
  const coldList = async () => {
    running = service(journal as unknown as EventJournal);
    const listed = await running.list();
    if (listed.profiles.length !== PROFILES + BUILTIN_TEMPLATES.length + 1) throw new Error(`listed ${listed.profiles.length} profiles`);
  };
  const settle = async () => {
    await running?.onModuleDestroy();
    await gc();
    rawBeside.push(...(await sample(1, () => rawReadAll(dir))));
    await gc();
  };
  const reopen = async (journalDir: string) => {
    await journal?.close();
    journal = await openLevelJournal(journalDir, { sync: true });
  };
  // First sight: a journal that never saw these files (and no state file), so each is journaled as a hand edit.
  const firstSight = await sample(COLD_RUNS, coldList, async (i) => {
    await settle();
    await rm(stateFile, { force: true });
    await reopen(join(root.path, `journal-${i}`));
  });
  // Restart: the process starts again on the journal of the last run, which holds every file (reopened, so nothing
  // of it is cached).
  const restart = await sample(COLD_RUNS, coldList, async () => {
    await settle();
    await reopen(join(root.path, `journal-${COLD_RUNS - 1}`));
  });
  const raw = report('raw read and parse, once before each cold list', rawBeside);
  const coldFirst = report('list, cold, first sight (1,000 hand edits journaled)', firstSight);
  const coldRestart = report('list, cold, restart (the journal holds every file)', restart);
  ratio('  first sight:', coldFirst, raw);
  ratio('  restart:', coldRestart, raw);

  await (running as ProfilesService | null)?.onModuleDestroy();
  const warm = service(journal as unknown as EventJournal);
  await warm.list();
  report('list, warm (stat per file, nothing read)', await sample(LIST_RUNS, () => warm.list()));

  const app = await startTestApp({ BRAINSTEM_PROFILES_DIR: dir });
  const get = async () => {
    const res = await app.rawInject({ method: 'GET', url: '/api/v1/agent-profiles', headers: app.auth() });
    if (res.statusCode !== 200) throw new Error(`GET /api/v1/agent-profiles answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    return res;
  };
  await get();
  report('GET /api/v1/agent-profiles over HTTP (inject, token), warm', await sample(LIST_RUNS, get));
  await app.close();

  const ids = (await warm.list()).profiles.map((p) => p.id).filter((id) => id.startsWith('bench-'));
  report('lint-all (1,000 profiles)', await sample(LINT_RUNS, () => Promise.all(ids.map((id) => warm.lint(id)))));
  report('lint, one profile', await sample(PROFILES, (i) => warm.lint(ids[i])));

  report('raw: temp file + datasync + rename (baseline)', await sample(PROFILES, (i) => rawAtomicWrite(root.path, i, texts[i])));
  report('PATCH each profile (journal, file, state; fsync)', await sample(PROFILES, (i) => warm.update(ids[i], { description: `patched ${i}` })));
  report('list, warm, after 1,000 PATCHes', await sample(LIST_RUNS, () => warm.list()));

  await (journal as EventJournal | null)?.close();
  root.remove();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
