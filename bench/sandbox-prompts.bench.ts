// npm run bench:sandbox-prompts — issue 49's "fewer prompts inside the sandbox": the same scripted work (a worker's
// permission requests, as its runtime reports them), through two real services, BRAINSTEM_SANDBOX=auto and off, with
// one profile (a deny rule and an ask rule). It counts the requests that reach the person (the session goes to
// 待授权) against those decided as they arrive (a profile's deny, sandbox.auto_allow_bash). Counts, not times: the
// same every run. Exits 2 when the machine cannot sandbox.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxAvailability } from '../src/sandbox/sandbox-availability';
import { SessionStatus } from '../src/sessions/session.status';
import { ServiceProcess, callService, startService } from '../test/support/service-process';
import { tempDir } from '../test/support/temp-dir';

/** What a coding worker asks to run in one piece of work: builds, tests, git, a file edit, a search, a push. */
const WORK: { tool: string; input: Record<string, string> }[] = [
  { tool: 'Bash', input: { command: 'npm ci' } },
  { tool: 'Bash', input: { command: 'npm test' } },
  { tool: 'Bash', input: { command: 'npx tsc --noEmit' } },
  { tool: 'Bash', input: { command: 'git status --porcelain' } },
  { tool: 'Bash', input: { command: 'git diff' } },
  { tool: 'Bash', input: { command: 'rg -n TODO src' } },
  { tool: 'Bash', input: { command: 'ls -la' } },
  { tool: 'Bash', input: { command: 'node scripts/gen.js' } },
  { tool: 'Bash', input: { command: 'npm run lint -- --fix' } },
  { tool: 'Bash', input: { command: 'git add -A && git commit -m wip' } },
  { tool: 'Bash', input: { command: 'git push origin HEAD' } },
  { tool: 'Bash', input: { command: 'rm -rf node_modules' } },
  { tool: 'Write', input: { file_path: 'src/a.ts' } },
  { tool: 'WebFetch', input: { url: 'https://example.org' } },
];

const PROFILE = {
  name: 'Prompts bench',
  permissions: { mode: 'default', deny: ['Bash(rm -rf *)'], ask: ['Bash(git push *)'] },
};

async function counts(svc: ServiceProcess, cwd: string): Promise<{ asked: number; decided: number; sandboxed: boolean }> {
  const profile = await callService<{ id: string }>(svc, 'POST', '/agent-profiles', PROFILE);
  const s = await callService<SessionStatus>(svc, 'POST', '/coding-sessions', { cwd, command: 'sleep', args: ['120'], profile_id: profile.id });
  let asked = 0;
  let decided = 0;
  for (const step of WORK) {
    const res = await fetch(`${svc.url}/api/v1/coding-sessions/${s.id}/signals`, {
      method: 'POST',
      headers: { ...svc.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'permission_request', ...step }),
    });
    const body = (await res.json()) as SessionStatus & { code?: string };
    // A profile's deny answers the request as it arrives (403 denied_by_profile): nobody is asked.
    if (res.status === 403 && body.code === 'denied_by_profile') {
      decided++;
      continue;
    }
    if (!res.ok) throw new Error(`signal: ${res.status} ${JSON.stringify(body)}`);
    const after = body;
    if (after.pending?.kind === 'permission') {
      asked++;
      // The person allows, and the worker goes on to its next step.
      await callService(svc, 'POST', `/coding-sessions/${s.id}/permission`, { decision: 'allow', request_id: after.pending.request_id });
    } else {
      decided++;
      if (after.state !== 'working') throw new Error(`unexpected state ${after.state}`);
    }
  }
  await callService(svc, 'POST', `/coding-sessions/${s.id}/stop`, {});
  return { asked, decided, sandboxed: s.sandbox.on };
}

async function main(): Promise<void> {
  const available = sandboxAvailability();
  if (!available.available) {
    process.stderr.write(`bench:sandbox-prompts: this machine cannot sandbox: ${available.reason}\n`);
    process.exit(2);
  }
  const dir = tempDir('brainstem-bench-prompts-');
  const cwd = join(dir.path, 'work');
  mkdirSync(cwd, { recursive: true });
  const rows: [string, Awaited<ReturnType<typeof counts>>][] = [];
  try {
    for (const mode of ['auto', 'off'] as const) {
      const svc = await startService({ BRAINSTEM_SANDBOX: mode, BRAINSTEM_JOURNAL_DIR: join(dir.path, `data-${mode}`), BRAINSTEM_PROFILES_DIR: join(dir.path, `profiles-${mode}`) });
      try {
        rows.push([mode, await counts(svc, cwd)]);
      } finally {
        svc.child.kill('SIGTERM');
        await svc.exited;
      }
    }
  } finally {
    dir.remove();
  }
  console.log(`the same ${WORK.length} permission requests (12 Bash, a Write, a WebFetch), profile: deny Bash(rm -rf *), ask Bash(git push *)`);
  for (const [mode, c] of rows) {
    console.log(`${(mode === 'auto' ? 'sandboxed (auto)' : 'unsandboxed (off)').padEnd(20)} sandbox ${c.sandboxed ? 'on ' : 'off'}  reached the person: ${c.asked}  decided as they arrived: ${c.decided}`);
  }
  const [sandboxed, plain] = [rows[0][1], rows[1][1]];
  console.log(`prompts saved by the sandbox: ${plain.asked - sandboxed.asked} of ${plain.asked} (${((100 * (plain.asked - sandboxed.asked)) / Math.max(1, plain.asked)).toFixed(0)}%)`);
}

void main();
