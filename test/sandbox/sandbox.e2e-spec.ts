import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxAvailability } from '../../src/sandbox/sandbox-availability';
import { SessionStatus } from '../../src/sessions/session.status';
import { gitRepo } from '../support/git-repo';
import { ServiceProcess, callService, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

/**
 * Real bubblewrap, socat and ripgrep (installed by .ci/run), a real service process, real workers. What a sandboxed
 * worker tries is written by the worker itself to its own folder (the only place it may write), then read here.
 */
describe('workers in the OS sandbox', () => {
  const root = tempDir('brainstem-sandbox-');
  const data = join(root.path, 'data');
  const profiles = join(root.path, 'profiles');
  const cwd = join(root.path, 'work');
  const other = join(root.path, 'other');
  let svc: ServiceProcess;

  beforeAll(async () => {
    expect(sandboxAvailability()).toMatchObject({ available: true });
    for (const d of [cwd, other, profiles]) mkdirSync(d, { recursive: true });
    writeFileSync(join(other, 'theirs.txt'), 'theirs\n');
    svc = await startService({ BRAINSTEM_JOURNAL_DIR: data, BRAINSTEM_PROFILES_DIR: profiles, BRAINSTEM_SANDBOX: 'auto' });
  });
  afterAll(async () => {
    svc?.child.kill('SIGTERM');
    await svc?.exited;
    root.remove();
  });

  const start = (body: object) => callService<SessionStatus>(svc, 'POST', '/coding-sessions', body);
  const settled = (id: string) =>
    waitFor(async () => {
      const s = await callService<SessionStatus>(svc, 'GET', `/coding-sessions/${id}`);
      return s.state === 'exited' ? s : undefined;
    }, { timeoutMs: 60_000, what: `session ${id} to exit` });

  /** A bash worker in `dir` that writes what each probe printed to report.txt there. */
  const probe = (dir: string, script: string) => ({ cwd: dir, command: 'bash', args: ['-c', `{ ${script} ; } > report.txt 2>&1`] });

  it('cannot read the user\'s token from /proc or the data directory, nor write the profiles, the journal or another session\'s folder; it writes its own', async () => {
    const s = await start(
      probe(
        cwd,
        [
          // Every process it can see, its ancestors' environments included.
          `for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done | tr '\\0' '\\n' | grep -c '${svc.token}' || true`,
          `echo "data: $(ls ${data} 2>&1 | wc -l) entries"; cat ${data}/api-token ${data}/*token* 2>&1 | grep -c '${svc.token}' || true`,
          `echo x > ${profiles}/mine.yaml && echo PROFILES-WRITTEN`,
          `echo x > ${data}/journal-poke && echo DATA-WRITTEN`,
          `echo x >> ${other}/theirs.txt && echo OTHER-WRITTEN`,
          `echo mine > own.txt && echo OWN-WRITTEN`,
          // No descriptor the service had open (its journal's files) reached the worker.
          `echo "fds into data: $(ls -l /proc/self/fd/ 2>/dev/null | grep -c '${data}')"`,
        ].join('; '),
      ),
    );
    expect(s.sandbox).toMatchObject({ on: true, reason: null });
    expect(s.sandbox.policy?.deny_read).toEqual(expect.arrayContaining([data]));
    await settled(s.id);
    const report = readFileSync(join(cwd, 'report.txt'), 'utf8').split('\n');
    // No visible process carries the token, and the data directory shows nothing.
    expect(report[0]).toBe('0');
    expect(report).toContain('data: 0 entries');
    expect(report).toContain('OWN-WRITTEN');
    expect(report).toContain('fds into data: 0');
    expect(report.join('\n')).not.toMatch(/PROFILES-WRITTEN|OTHER-WRITTEN/);
    // The hidden data directory is an empty scratch folder inside (srt's tmpfs): what is written there never reaches it.
    expect(existsSync(join(profiles, 'mine.yaml'))).toBe(false);
    expect(existsSync(join(data, 'journal-poke'))).toBe(false);
    expect(readFileSync(join(other, 'theirs.txt'), 'utf8')).toBe('theirs\n');
    expect(readFileSync(join(cwd, 'own.txt'), 'utf8')).toBe('mine\n');
  });

  it("reaches the service from inside (BRAINSTEM_URL, its own credential): its signals are taken", async () => {
    const s = await start(
      probe(
        cwd,
        `curl -s -o /dev/null -w '%{http_code}' -X POST "$BRAINSTEM_URL/api/v1/coding-sessions/$BRAINSTEM_SESSION_ID/signals" -H "authorization: Bearer $BRAINSTEM_TOKEN" -H 'content-type: application/json' -d '{"type":"report_progress","status":"completed","message":"from inside"}'`,
      ),
    );
    const done = await settled(s.id);
    expect(readFileSync(join(cwd, 'report.txt'), 'utf8')).toBe('200');
    expect(done.last_progress).toMatchObject({ message: 'from inside' });
  });

  it("does not run the user's ~/.bashrc before the worker, with the service started without a shell (no SHLVL)", async () => {
    // Debian's bash reads ~/.bashrc when its stdin is a socket and SHLVL is unset: srt's wrapper shell would, as the
    // worker's stdin is the service's socket pair.
    const home = join(root.path, 'home');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, '.bashrc'), 'export BASHRC_RAN=yes\n');
    const shell = await startService({ HOME: home, BRAINSTEM_JOURNAL_DIR: join(root.path, 'data-rc'), BRAINSTEM_PROFILES_DIR: profiles, BRAINSTEM_SANDBOX: 'auto' });
    try {
      const s = await callService<SessionStatus>(shell, 'POST', '/coding-sessions', probe(cwd, 'echo "bashrc: ${BASHRC_RAN:-no}"'));
      expect(s.sandbox.on).toBe(true);
      await waitFor(async () => ((await callService<SessionStatus>(shell, 'GET', `/coding-sessions/${s.id}`)).state === 'exited' ? true : undefined), { timeoutMs: 60_000, what: 'the worker to exit' });
      expect(readFileSync(join(cwd, 'report.txt'), 'utf8')).toBe('bashrc: no\n');
    } finally {
      shell.child.kill('SIGTERM');
      await shell.exited;
    }
  });

  it('cannot write into another session\'s worktree, and commits in its own', async () => {
    const repo = gitRepo({ 'README.md': 'hello\n' });
    try {
      const first = await start({
        cwd: repo.path,
        isolation: 'worktree',
        command: 'bash',
        args: ['-c', 'echo f > f.txt && git add f.txt && git -c user.name=w -c user.email=w@example.invalid commit -qm f && sleep 30'],
      });
      const theirs = first.worktree!.path;
      const s = await start({
        cwd: repo.path,
        isolation: 'worktree',
        command: 'bash',
        args: ['-c', `{ echo x >> ${theirs}/README.md && echo THEIRS-WRITTEN; echo ok > mine.txt && git add -A && git -c user.name=w -c user.email=w@example.invalid commit -qm mine && echo COMMITTED; git status --porcelain; } > report.txt 2>&1`],
      });
      await settled(s.id);
      const own = s.worktree!.path;
      const report = readFileSync(join(own, 'report.txt'), 'utf8');
      expect(report).toContain('COMMITTED');
      expect(report).not.toContain('THEIRS-WRITTEN');
      // srt's mount points (missing .bashrc, .vscode…) are ignored inside: git add -A took only the worker's files.
      expect(report.trim().split('\n').slice(-1)[0]).toBe(' M report.txt');
      expect(repo.gitIn(own, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()).toEqual(['mine.txt', 'report.txt']);
      expect(repo.gitIn(own, 'log', '-1', '--format=%s').trim()).toBe('mine');
      expect(readFileSync(join(theirs, 'README.md'), 'utf8')).toBe('hello\n');
      // While the first worker runs, srt's empty mount points (.bashrc, .mcp.json…) are in its worktree on the host:
      // its diff leaves them out, and they do not make its worktree too dirty to merge.
      const mountPoint = join(theirs, '.bashrc');
      await waitFor(() => existsSync(mountPoint) && repo.gitIn(theirs, 'log', '-1', '--format=%s').trim() === 'f', { timeoutMs: 30_000, what: "srt's mount point and the commit in the live worktree" });
      const diff = await callService<{ files: { path: string }[] }>(svc, 'GET', `/coding-sessions/${first.id}/diff`);
      expect(diff.files.map((f) => f.path)).toEqual(['f.txt']);
      const merged = await callService<{ worktree: { merged: { into: string } | null } }>(svc, 'POST', `/coding-sessions/${first.id}/merge`, { strategy: 'merge' });
      expect(merged.worktree.merged).toMatchObject({ into: 'main' });
      expect(repo.git('show', 'main:f.txt')).toBe('f\n');
      await callService(svc, 'POST', `/coding-sessions/${first.id}/stop`, {});
    } finally {
      repo.remove();
    }
  });
});

describe('BRAINSTEM_SANDBOX on a machine without bubblewrap', () => {
  const root = tempDir('brainstem-nobwrap-');
  const bin = join(root.path, 'bin');
  const cwd = join(root.path, 'work');

  beforeAll(() => {
    mkdirSync(bin, { recursive: true });
    mkdirSync(cwd, { recursive: true });
    // A PATH with what the service and a worker need, and no bwrap.
    for (const tool of ['bash', 'sh', 'node', 'socat', 'rg', 'git', 'true']) {
      const found = (process.env.PATH ?? '').split(':').map((d) => join(d, tool)).find((p) => existsSync(p));
      if (found) symlinkSync(found, join(bin, tool));
    }
  });
  afterAll(() => root.remove());

  const withService = async (mode: string, run: (svc: ServiceProcess) => Promise<void>) => {
    const svc = await startService({ PATH: bin, BRAINSTEM_JOURNAL_DIR: join(root.path, `data-${mode}`), BRAINSTEM_PROFILES_DIR: join(root.path, `profiles-${mode}`), BRAINSTEM_SANDBOX: mode });
    try {
      await run(svc);
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
  };

  it('required: a session is refused with 409 sandbox_unavailable naming bubblewrap, and nothing is journaled', async () => {
    await withService('required', async (svc) => {
      expect(svc.output()).toMatch(/BRAINSTEM_SANDBOX=required and bwrap not found on PATH \(install Debian's bubblewrap\)/);
      const res = await fetch(`${svc.url}/api/v1/coding-sessions`, {
        method: 'POST',
        headers: { ...svc.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ cwd, command: 'true' }),
      });
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ code: 'sandbox_unavailable', message: expect.stringMatching(/bwrap not found on PATH/) });
      const list = await callService<{ sessions: unknown[] }>(svc, 'GET', '/coding-sessions');
      expect(list.sessions).toEqual([]);
    });
  });

  it('auto: the session runs unsandboxed and says so, as do the start-up line and /ready', async () => {
    await withService('auto', async (svc) => {
      expect(svc.output()).toMatch(/workers run UNSANDBOXED: bwrap not found on PATH/);
      const ready = await callService<{ sandbox: object }>(svc, 'GET', '/ready');
      expect(ready.sandbox).toEqual({ mode: 'auto', workers_sandboxed: false, missing: ['bwrap'], reason: "bwrap not found on PATH (install Debian's bubblewrap)" });
      const s = await callService<SessionStatus>(svc, 'POST', '/coding-sessions', { cwd, command: 'true' });
      expect(s.sandbox).toEqual({ on: false, policy: null, reason: "bwrap not found on PATH (install Debian's bubblewrap)" });
    });
  });
});
