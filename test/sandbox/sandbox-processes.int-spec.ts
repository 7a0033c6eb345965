import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxAvailability } from '../../src/sandbox/sandbox-availability';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';

type Status = { id: string; state: string; exit_reason: string | null; exit_signal: string | null; sandbox: { on: boolean } };

/** The host's pids of every process whose environment names the session (a sandboxed worker's inside its namespace too). */
function sessionProcesses(id: string): number[] {
  const entry = Buffer.from(`BRAINSTEM_SESSION_ID=${id}\0`);
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const env = readFileSync(`/proc/${n}/environ`);
        const at = env.indexOf(entry);
        return at === 0 || (at > 0 && env[at - 1] === 0);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Stops, exits and signals of sandboxed workers, as the host sees them: what the unsandboxed specs (sessions.int-spec) show, through the launcher. */
describe('sandboxed workers: stop and exit', () => {
  const cwd = tempDir('brainstem-sandboxed-cwd-');
  const t = useTestApp({ BRAINSTEM_SANDBOX: 'required' }, { listen: true });
  beforeAll(() => expect(sandboxAvailability()).toMatchObject({ available: true }));
  afterAll(() => cwd.remove());

  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.inject({ method, url: `/api/v1/coding-sessions${url}`, ...(payload ? { payload } : {}) });
    return res.json() as Status;
  };
  const start = async (script: string) => {
    const s = await call('POST', '', { cwd: cwd.path, command: 'bash', args: ['-c', script] });
    expect(s.sandbox.on).toBe(true);
    return s;
  };
  const exited = (id: string) =>
    waitFor(async () => {
      const s = await call('GET', `/${id}`);
      return s.state === 'exited' ? s : undefined;
    }, { timeoutMs: 30_000, what: `session ${id} to exit` });
  const ready = (file: string) => waitFor(() => { try { return readFileSync(join(cwd.path, file), 'utf8').includes('ready'); } catch { return false; } }, { timeoutMs: 30_000, what: file });

  it('given a worker that ends on SIGTERM as it pleases, when it is stopped, then its trap ran and it is stopped', async () => {
    const s = await start(`trap 'echo "got TERM" > trap.txt; exit 0' TERM; echo ready > trap-ready.txt; while true; do sleep 0.1; done`);
    await ready('trap-ready.txt');
    await call('POST', `/${s.id}/stop`, { grace_ms: 20_000 });
    expect(await exited(s.id)).toMatchObject({ exit_reason: 'stopped' });
    expect(readFileSync(join(cwd.path, 'trap.txt'), 'utf8')).toBe('got TERM\n');
  });

  it('given a worker that does not catch SIGTERM, when it is stopped, then it is recorded as ended by SIGTERM', async () => {
    const s = await start(`echo ready > plain-ready.txt; exec sleep 300`);
    await ready('plain-ready.txt');
    await call('POST', `/${s.id}/stop`, { grace_ms: 20_000 });
    expect(await exited(s.id)).toMatchObject({ exit_reason: 'stopped', exit_signal: 'SIGTERM' });
  });

  it('given a worker that ignores SIGTERM and a child that left its session (setsid), when it is stopped, then SIGKILL at the deadline ends both, and no process of the session is left', async () => {
    const s = await start(`trap '' TERM; setsid sleep 300 & echo ready > stubborn-ready.txt; while true; do sleep 0.1; done`);
    await ready('stubborn-ready.txt');
    expect(sessionProcesses(s.id).length).toBeGreaterThan(1);
    await call('POST', `/${s.id}/stop`, { grace_ms: 500 });
    expect(await exited(s.id)).toMatchObject({ exit_reason: 'stopped' });
    await waitFor(() => sessionProcesses(s.id).length === 0, { timeoutMs: 30_000, what: `every process of ${s.id} gone` });
  });
});
