import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { spawnService, startService } from '../support/service-process';
import { editStoredEvent } from '../support/stored-events';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WORKERS, WorkerReaper } from '../support/workers';

describe('the service as a real process', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir('brainstem-proc-')));
  const reaper = new WorkerReaper();
  afterEach(() => {
    reaper.killAll();
    dir.remove();
  });

  it('starts on the journal dir, answers health, and exits cleanly on SIGTERM leaving a verifiable journal', async () => {
    const svc = await startService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_PLUGINS: '' });
    const res = await fetch(`${svc.url}/api/v1/health`, { headers: svc.auth });
    expect(await res.json()).toEqual({ status: 'ok' });
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    const journal = await openLevelJournal(dir.path);
    expect((await journal.verify()).ok).toBe(true);
    await journal.close();
  });

  it('refuses to start on a platform without /proc, naming it, before it opens the journal', async () => {
    // Given the service run as if on macOS (Node reports the platform the preload sets)
    const journalDir = join(dir.path, 'journal');
    const svc = spawnService({
      BRAINSTEM_JOURNAL_DIR: journalDir,
      BRAINSTEM_PLUGINS: '',
      NODE_OPTIONS: `--require ${resolve(__dirname, '../fixtures/force-platform.js')}`,
      BRAINSTEM_TEST_PLATFORM: 'darwin',
    });
    // Then it exits 1 with a message naming the platform, and no journal was created
    expect(await svc.exited).toBe(1);
    expect(svc.output()).toBe('brainstem: unsupported platform darwin: Brainstem tracks worker processes through /proc, which linux has and darwin has not; run it on linux\n');
    expect(existsSync(journalDir)).toBe(false);
  });

  it('exits on SIGTERM while clients hold event streams open and a stop waits out a long grace', async () => {
    const svc = await startService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_PLUGINS: '' });
    const post = (path: string, body: object) =>
      fetch(`${svc.url}${path}`, { method: 'POST', headers: { ...svc.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const created = (await (await post('/api/v1/coding-sessions', { command: process.execPath, args: [join(WORKERS, 'stubborn.js')], cwd: dir.path })).json()) as { id: string; pid: number };
    reaper.track(created.pid);
    // A worker that ignores SIGTERM, stopped with a 40 s grace: the request stays open until SIGKILL.
    const stopping = post(`/api/v1/coding-sessions/${created.id}/stop`, { grace_ms: 40_000 }).catch(() => undefined);
    const streams = await Promise.all(
      ['/api/v1/events/stream', '/api/v1/session-os/main-brain/rounds/stream'].map(async (path) => {
        const res = await fetch(`${svc.url}${path}`, { headers: svc.auth });
        expect(res.status).toBe(200);
        return res.body?.getReader();
      }),
    );
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    for (const reader of streams) await reader?.cancel().catch(() => undefined);
    await stopping;
  });

  it('disables a plugin whose async subscriber rejects or whose own timer throws, and keeps serving', async () => {
    const plugins = ['async-rejecting.plugin.js', 'timer-throwing.plugin.js'].map((f) => resolve(__dirname, '../fixtures/plugins', f));
    const svc = await startService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_PLUGINS: plugins.join(',') });
    const failed = await waitFor(
      async () => {
        if (svc.child.exitCode !== null) throw new Error(`service exited ${svc.child.exitCode}:\n${svc.output()}`);
        const { events } = (await (await fetch(`${svc.url}/api/v1/journal/events?stream=plugins`, { headers: svc.auth })).json()) as { events: Array<{ type: string; data: { name: string; error: string } }> };
        const names = events.filter((e) => e.type === 'plugin.failed').map((e) => [e.data.name, e.data.error]);
        return names.length === 2 ? names : undefined;
      },
      { what: 'both plugins to be disabled' },
    );
    expect(failed.sort()).toEqual([
      ['async-rejecter', 'rejected in an async subscriber'],
      ['timer-thrower', 'thrown from a plugin timer'],
    ]);
    expect((await fetch(`${svc.url}/api/v1/health`, { headers: svc.auth })).status).toBe(200);
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
  });

  it('given SIGKILL while clients signal sessions and message them under supervision, then it restarts on a journal that verifies and holds every acknowledged event; verify during the load says ok', async () => {
    const env = { BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_PROFILES_DIR: join(dir.path, 'profiles'), BRAINSTEM_PLUGINS: '', BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '20' };
    const svc = await startService(env);
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${svc.url}/api/v1${path}`, { method, headers: { ...svc.auth, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect((await call('POST', '/session-os/main-brain/autonomous', { enabled: true })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await call('POST', '/coding-sessions', { command: process.execPath, args: [join(WORKERS, 'quiet.js')], cwd: dir.path });
      expect(created.status).toBe(201);
      reaper.track(created.body.pid as number);
      ids.push(created.body.id as string);
    }
    let stop = false;
    const signals = [{ type: 'report_progress', status: 'working' }, { type: 'notify_blocked', reason: 'r' }, { type: 'turn_ended', result: 'done' }];
    const load = ids.map(async (id, k) => {
      for (let n = k; !stop; n++) {
        await call('POST', `/coding-sessions/${id}/signals`, signals[n % signals.length]).catch(() => undefined);
        await call('POST', `/coding-sessions/${id}/messages`, { text: `go on ${n}` }).catch(() => undefined);
      }
    });
    // Verify while the load runs: the head it reports was acknowledged, so the restarted journal must hold it.
    const verified: Array<{ ok: boolean; head_seq: number }> = [];
    await waitFor(
      async () => {
        const v = (await call('GET', '/journal/verify')).body as { ok: boolean; head_seq: number };
        verified.push(v);
        return verified.length >= 5 && v.head_seq > 300;
      },
      { timeoutMs: 60000, intervalMs: 10, what: 'the load to pass 300 events while verify runs' },
    );
    svc.child.kill('SIGKILL');
    await svc.exited;
    stop = true;
    await Promise.all(load);
    expect(verified.filter((v) => !v.ok)).toEqual([]);

    const again = await startService(env);
    try {
      const v = (await (await fetch(`${again.url}/api/v1/journal/verify`, { headers: again.auth })).json()) as { ok: boolean; head_seq: number };
      expect(v.ok).toBe(true);
      expect(v.head_seq).toBeGreaterThanOrEqual(verified[verified.length - 1].head_seq);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });

  it('refuses to start on a bad value, naming the variable', async () => {
    const p = spawnService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_SUPERVISION_STALL_COOLDOWN_S: '-3' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('BRAINSTEM_SUPERVISION_STALL_COOLDOWN_S: expected an integer in 0..');
  });

  it('refuses to start on a malformed notifier URL or ntfy topic, naming it', async () => {
    const url = spawnService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_NOTIFY_WEBHOOK_URL: 'hooks.example/brainstem' });
    expect(await url.exited).toBe(1);
    expect(url.output()).toContain('BRAINSTEM_NOTIFY_WEBHOOK_URL: expected an http(s) URL, got "hooks.example/brainstem"');
    const topic = spawnService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_NOTIFY_NTFY_URL: 'https://ntfy.sh', BRAINSTEM_NOTIFY_NTFY_TOPIC: 'my topic' });
    expect(await topic.exited).toBe(1);
    expect(topic.output()).toContain('BRAINSTEM_NOTIFY_NTFY_TOPIC: expected 1 to 64 letters, digits, - or _, got "my topic"');
  });

  it('refuses to start when a data directory is a file or cannot be created, naming the variable', async () => {
    const file = join(dir.path, 'a-file');
    writeFileSync(file, 'x');
    for (const [env, message] of [
      [{ BRAINSTEM_JOURNAL_DIR: file }, `BRAINSTEM_JOURNAL_DIR: ${file} is not a directory`],
      [{ BRAINSTEM_JOURNAL_DIR: join(file, 'journal') }, `BRAINSTEM_JOURNAL_DIR: ${join(file, 'journal')} cannot be created: ${file} is not a directory`],
      [{ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'j'), BRAINSTEM_PROFILES_DIR: file }, `BRAINSTEM_PROFILES_DIR: ${file} is not a directory`],
    ] as const) {
      const p = spawnService(env);
      expect(await p.exited).toBe(1);
      expect(p.output()).toContain(message);
      expect(p.output()).not.toContain('    at ');
    }
  });

  it('says plainly when its port is taken', async () => {
    const first = await startService({ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'a'), BRAINSTEM_PLUGINS: '' });
    const port = new URL(first.url).port;
    const second = spawnService({ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'b'), BRAINSTEM_PORT: port });
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`BRAINSTEM_PORT: port ${port} on 127.0.0.1 is already in use`);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  });

  it("refuses to start when the hosted brain's runtime is missing, naming it", async () => {
    const p = spawnService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code', PATH: dirname(process.execPath) });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain("BRAINSTEM_MAIN_BRAIN_RUNTIME=claude-code: the main brain's runtime is missing: claude is not on PATH");
  });

  it('refuses to start when the hosted brain\'s profile does not exist, naming it', async () => {
    const bin = join(dir.path, 'bin');
    mkdirSync(bin);
    symlinkSync(resolve(FAKE_BIN, 'claude'), join(bin, 'claude'));
    const p = spawnService({ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'j'), BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_PROFILE: 'no-such-brain', PATH: `${bin}:${dirname(process.execPath)}` });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('BRAINSTEM_MAIN_BRAIN_PROFILE: no profile "no-such-brain"');
  });

  it('refuses BRAINSTEM_AUTH=off on a non-loopback bind', async () => {
    const p = spawnService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_HOST: '0.0.0.0', BRAINSTEM_AUTH: 'off' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('BRAINSTEM_AUTH: off is for loopback only; refusing to serve 0.0.0.0 without credentials');
  });

  it('says at start where the generated user token is; the token works, nothing answers without it; off is warned about', async () => {
    const svc = await startService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_PLUGINS: '', BRAINSTEM_API_TOKEN: '' });
    try {
      const path = join(dir.path, 'api-token');
      expect(svc.output()).toContain(`Brainstem listening on ${svc.url} (user token: ${path}; main brain token: ${join(dir.path, 'brain-token')})`);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect((await fetch(`${svc.url}/api/v1/ready`)).status).toBe(401);
      const token = readFileSync(path, 'utf8').trim();
      expect((await fetch(`${svc.url}/api/v1/ready`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      // The liveness check alone answers without it, for monitors and probes.
      expect((await fetch(`${svc.url}/api/v1/health`)).status).toBe(200);
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
    const off = await startService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_PLUGINS: '', BRAINSTEM_AUTH: 'off' });
    try {
      expect(off.output()).toContain('BRAINSTEM_AUTH=off: a request without a credential acts as the user');
      expect((await fetch(`${off.url}/api/v1/ready`)).status).toBe(200);
    } finally {
      off.child.kill('SIGTERM');
      await off.exited;
    }
  });

  it('refuses to start on a token file other users can read, saying how to fix it', async () => {
    writeFileSync(join(dir.path, 'api-token'), 'bsu_shared\n', { mode: 0o644 });
    const p = spawnService({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_API_TOKEN: '' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain(`${join(dir.path, 'api-token')} is readable by other users (mode 644); run: chmod 600`);
  });

  it('refuses to start on a corrupt journal, naming the seq', async () => {
    const journal = await openLevelJournal(dir.path);
    await journal.append('x', [{ type: 'test.one' }, { type: 'test.two' }]);
    await journal.close();
    await editStoredEvent(dir.path, 1, (segment) => segment.replace('test.one', 'test.0ne'));
    const p = spawnService({ BRAINSTEM_JOURNAL_DIR: dir.path });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('journal is corrupt at seq 1');
  });
});
