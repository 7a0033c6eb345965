import { join } from 'node:path';
import { startService, ServiceProcess } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

interface LogLine {
  level: string;
  msg: string;
  context?: string;
  req?: { id: string; method: string; url: string };
  res?: { status: number };
}

/** Every line the service wrote to stdout, each parsed as JSON (a line that is not JSON fails the parse). */
const logLines = (svc: ServiceProcess): LogLine[] =>
  svc
    .stdout()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        throw new Error(`not a JSON line: ${l}`);
      }
    });

describe('the service log, stdout not a terminal', () => {
  let dir: ReturnType<typeof tempDir>;
  let svc: ServiceProcess | null = null;
  const reaper = new WorkerReaper();
  beforeEach(() => (dir = tempDir('brainstem-logs-')));
  afterEach(async () => {
    if (svc && svc.child.exitCode === null) {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
    svc = null;
    reaper.killAll();
    dir.remove();
  });

  const start = async (env: Record<string, string> = {}) =>
    (svc = await startService({ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(dir.path, 'profiles'), BRAINSTEM_PLUGINS: '', ...env }));

  it('writes JSON lines, at most 5 at info while booting, and one line per request whose id the events it appended carry', async () => {
    // Given the service started with its stdout piped
    const s = await start();
    const boot = logLines(s);
    expect(boot.filter((l) => l.level === 'info').length).toBeLessThanOrEqual(5);
    expect(boot.some((l) => l.msg.startsWith(`Brainstem listening on ${s.url} `))).toBe(true);

    // When a request with a caller's X-Request-Id creates a session
    const res = await fetch(`${s.url}/api/v1/coding-sessions`, {
      method: 'POST',
      headers: { ...s.auth, 'content-type': 'application/json', 'x-request-id': 'trace-42.a' },
      body: JSON.stringify({ command: process.execPath, args: [join(WORKERS, 'quiet.js')], cwd: dir.path }),
    });
    const created = (await res.json()) as { id: string; pid: number };
    reaper.track(created.pid);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe('trace-42.a');

    // Then one line logs it with that id, and no line carries the token
    const requestLines = await waitFor(() => {
      const lines = logLines(s).filter((l) => l.req?.url === '/api/v1/coding-sessions');
      return lines.length > 0 ? lines : undefined;
    });
    expect(requestLines).toEqual([expect.objectContaining({ level: 'info', req: { id: 'trace-42.a', method: 'POST', url: '/api/v1/coding-sessions' }, res: { status: 201 } })]);
    expect(s.stdout()).not.toContain(s.token);
    // And the session's first event, appended while handling it, carries the id in its metadata
    const journal = await fetch(`${s.url}/api/v1/journal/events?stream=session-${created.id}`, { headers: s.auth });
    const { events } = (await journal.json()) as { events: Array<{ type: string; meta: { correlation_id: string | null } }> };
    expect(events[0]).toEqual(expect.objectContaining({ type: 'session.created', meta: expect.objectContaining({ correlation_id: 'trace-42.a' }) }));
  });

  it('replaces an X-Request-Id that is not plain short text by its own, and logs a refused request too', async () => {
    const s = await start();
    const res = await fetch(`${s.url}/api/v1/ready`, { headers: { 'x-request-id': 'forged "id" with spaces' } });
    expect(res.status).toBe(401);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const line = await waitFor(() => logLines(s).find((l) => l.req?.url === '/api/v1/ready'));
    expect(line).toEqual(expect.objectContaining({ req: { id, method: 'GET', url: '/api/v1/ready' }, res: { status: 401 } }));
  });

  it('logs nothing at info with BRAINSTEM_LOG_LEVEL=warn but the line announcing where it listens, and the warning that workers run unsandboxed', async () => {
    const s = await start({ BRAINSTEM_LOG_LEVEL: 'warn' });
    const health = await fetch(`${s.url}/api/v1/health`, { headers: s.auth });
    expect(health.status).toBe(200);
    // Stopping logs at info too ("SIGTERM: shutting down"): the process has exited, so everything it would log is written.
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    // The harness runs workers with BRAINSTEM_SANDBOX=off, which warns at start-up whatever the level.
    expect(logLines(s)).toEqual([
      expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/^BRAINSTEM_SANDBOX=off: workers run with your full rights/) }),
      expect.objectContaining({ level: 'info', msg: expect.stringMatching(/^Brainstem listening on /) }),
    ]);
  });
});
