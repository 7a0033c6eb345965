// npm run bench:profiles — 1,000 profiles on disk: list, lint-all and a PATCH each, against raw fs + YAML in the same run.
// Prints figures, asserts nothing.
import { open, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { load } from 'js-yaml';
import { createApp } from '../src/app.factory';
import { EventBus } from '../src/bus/event-bus';
import { openLevelJournal } from '../src/journal/journal.factory';
import { normalizeDocument } from '../src/profiles/profile.schema';
import { FsProfileStore } from '../src/profiles/profile.store';
import { dumpProfileYaml } from '../src/profiles/profile.yaml';
import { ProfilesService } from '../src/profiles/profiles.service';
import { BUILTIN_TEMPLATES } from '../src/profiles/templates';
import { tempDir } from '../test/support/temp-dir';
import { testConfig } from '../test/support/test-config';

const PROFILES = Number(process.argv[2] ?? 1000);
const LIST_RUNS = 50;
const LINT_RUNS = 10;

/** Realistic documents: a built-in's prompt and tools plus an MCP server and a hook each (about 3 KB). */
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

async function sample(runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

function report(label: string, samples: number[]): void {
  const f = (n: number) => n.toFixed(2).padStart(9);
  console.log(`${label.padEnd(52)} p50 ${f(percentile(samples, 50))} ms   p99 ${f(percentile(samples, 99))} ms   (n=${samples.length})`);
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
  mkdirSync(dir);
  const texts = Array.from({ length: PROFILES }, (_, i) => profileYaml(i));
  await Promise.all(texts.map((text, i) => writeFile(join(dir, `bench-${String(i).padStart(4, '0')}.yaml`), text)));
  const bytes = texts.reduce((n, t) => n + t.length, 0);
  console.log(`${PROFILES} profiles on disk, ${(bytes / PROFILES / 1024).toFixed(1)} KiB each on average\n`);

  report('raw: readdir + readFile + yaml load (baseline)', await sample(LIST_RUNS, () => rawReadAll(dir)));

  const journal = await openLevelJournal(join(root.path, 'journal'), { sync: true });
  const service = new ProfilesService(new FsProfileStore(dir), new EventBus(journal), () => new Date());
  report('list, cold (parse and validate every file)', await sample(1, () => service.list()));
  report('list, warm (parse cache, stat per file)', await sample(LIST_RUNS, () => service.list()));

  const app = await createApp(testConfig({ BRAINSTEM_PROFILES_DIR: dir, BRAINSTEM_JOURNAL_DIR: join(root.path, 'journal-http') }), { logger: false });
  const inject = app.getHttpAdapter().getInstance().inject.bind(app.getHttpAdapter().getInstance());
  await inject({ method: 'GET', url: '/api/v1/agent-profiles' });
  report('GET /api/v1/agent-profiles over HTTP (inject), warm', await sample(LIST_RUNS, () => inject({ method: 'GET', url: '/api/v1/agent-profiles' })));
  await app.close();

  const ids = (await service.list()).profiles.map((p) => p.id).filter((id) => id.startsWith('bench-'));
  report('lint-all (1,000 profiles)', await sample(LINT_RUNS, () => Promise.all(ids.map((id) => service.lint(id)))));
  report('lint, one profile', await sample(PROFILES, (i) => service.lint(ids[i])));

  report('raw: temp file + datasync + rename (baseline)', await sample(PROFILES, (i) => rawAtomicWrite(root.path, i, texts[i])));
  report('PATCH each profile (file, state, journal; fsync)', await sample(PROFILES, (i) => service.update(ids[i], { description: `patched ${i}` })));
  report('list, warm, after 1,000 PATCHes', await sample(LIST_RUNS, () => service.list()));

  await journal.close();
  root.remove();
}

void main();
