import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxAvailability } from '../../src/sandbox/sandbox-availability';
import { fakeModelClaudeEnv } from '../support/claude-env';
import { FakeAnthropicApi } from '../support/fake-anthropic-api';
import { sessionCalls } from '../support/session-calls';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { stopProcessesOfHome } from '../support/workers';

const REAL_CLAUDE = process.env.BRAINSTEM_REAL_CLAUDE;

/**
 * A real claude worker in the sandbox, on the fake model API (reached from inside through the forwarded loopback
 * port): the model has claude's Bash tool try what test/sandbox/sandbox.e2e-spec.ts tries with a command worker.
 * CI sets BRAINSTEM_REAL_CLAUDE (.ci/real-clis).
 */
(REAL_CLAUDE ? describe : describe.skip)('a real claude worker in the sandbox', () => {
  const dirs = { bin: tempDir('brainstem-sbx-claude-bin-'), home: tempDir('brainstem-sbx-claude-home-'), cwd: tempDir('brainstem-sbx-claude-cwd-'), data: tempDir('brainstem-sbx-claude-data-') };
  const profiles = join(dirs.data.path, 'profiles');
  let api: FakeAnthropicApi | null = null;
  beforeAll(() => {
    expect(sandboxAvailability()).toMatchObject({ available: true });
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
  });
  const t = useTestApp(() => ({ BRAINSTEM_SANDBOX: 'required', BRAINSTEM_JOURNAL_DIR: join(dirs.data.path, 'journal'), BRAINSTEM_PROFILES_DIR: profiles }), { listen: true });
  afterAll(async () => {
    await api?.close();
    await stopProcessesOfHome(dirs.home.path);
    for (const d of Object.values(dirs)) d.remove();
  });
  const { call, untilState } = sessionCalls(() => t);

  it("runs Bash without asking, and its command can neither read the user's token nor write the profiles or the journal, while it writes its own folder", async () => {
    const journal = join(dirs.data.path, 'journal');
    const command = [
      `cat ${journal}/api-token ${journal}/worker-key > leaked.txt 2>&1`,
      `for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done | tr '\\0' '\\n' | grep -c BRAINSTEM_API_TOKEN > env-count.txt`,
      `(echo x > ${profiles}/mine.yaml && echo written || echo refused) > profiles.txt 2>&1`,
      `echo from-claude > own.txt`,
    ].join('; ');
    api = new FakeAnthropicApi((n) => (n === 1 ? { tool: 'Bash', input: { command } } : { text: `reply ${n}` }));
    const env = fakeModelClaudeEnv(await api.start(), dirs.home.path, dirs.bin.path);
    api.releaseAll();
    const started = await call('POST', '', { cwd: dirs.cwd.path, runtime: 'claude-code', env, prompt: 'go' });
    expect(started.status).toBe(201);
    expect((started.body as { sandbox?: unknown }).sandbox).toMatchObject({ on: true });
    const id = started.body.id as string;
    await untilState(id, 'pending_handling');
    await waitFor(() => existsSync(join(dirs.cwd.path, 'own.txt')), { timeoutMs: 30_000, what: "claude's command to run" });
    expect(readFileSync(join(dirs.cwd.path, 'own.txt'), 'utf8')).toBe('from-claude\n');
    // The keys are there on the host; the worker found nothing at their paths.
    expect(existsSync(join(journal, 'worker-key'))).toBe(true);
    expect(readFileSync(join(dirs.cwd.path, 'leaked.txt'), 'utf8')).toMatch(/worker-key: No such file or directory/);
    expect(readFileSync(join(dirs.cwd.path, 'env-count.txt'), 'utf8').trim()).toBe('0');
    expect(readFileSync(join(dirs.cwd.path, 'profiles.txt'), 'utf8')).toContain('refused');
    expect(existsSync(join(profiles, 'mine.yaml'))).toBe(false);
    // No permission was asked: Bash inside the sandbox runs unasked (sandbox.auto_allow_bash, on by default).
    expect(api.requests.length).toBeGreaterThanOrEqual(2);
    await call('POST', `/${id}/stop`, {});
  }, 180_000);
});
