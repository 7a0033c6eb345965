import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { FileSessionEnvStore } from '../../src/sessions/session-env.store';
import { sessionStore } from '../support/session-store';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper, isAlive } from '../support/workers';

describe('a worker spawned just before a crash, before its start was journaled (real processes, real LevelDB)', () => {
  const dir = tempDir('brainstem-orphans-');
  const journalDir = join(dir.path, 'journal');
  const reaper = new WorkerReaper();
  let t: TestApp | null = null;

  afterAll(async () => {
    reaper.killAll();
    await t?.close();
    dir.remove();
  });

  it('given a session journaled as created only, and its worker running, when the service boots, then the worker is found by its session id and killed, and the session is lost_on_restart', async () => {
    // What the crashed service left: the creation journaled, the worker spawned with its session id, no start.
    const journal = await openLevelJournal(journalDir);
    const store = sessionStore(journal, new FileSessionEnvStore(join(journalDir, 'session-env')));
    await store.registry.load();
    const created = await store.create({
      id: 'cs_crashedwhilestarting',
      cwd: dir.path,
      runtime: { name: 'command', command: process.execPath },
      args: [join(WORKERS, 'quiet.js')],
    });
    await journal.close();
    const orphan = spawn(process.execPath, [join(WORKERS, 'quiet.js')], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, BRAINSTEM_SESSION_ID: created.id },
    });
    orphan.unref();
    reaper.track(orphan.pid);
    // An unrelated process with another session's id is left alone.
    const bystander = spawn(process.execPath, [join(WORKERS, 'quiet.js')], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, BRAINSTEM_SESSION_ID: `${created.id}x` },
    });
    bystander.unref();
    reaper.track(bystander.pid);
    await waitFor(() => isAlive(orphan.pid!) && isAlive(bystander.pid!), { what: 'both processes to run' });

    t = await startTestApp({ BRAINSTEM_JOURNAL_DIR: journalDir });

    const status = (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${created.id}` })).json();
    expect(status).toMatchObject({ state: 'exited', exit_reason: 'lost_on_restart' });
    await waitFor(() => !isAlive(orphan.pid!), { timeoutMs: 10000, what: 'the orphaned worker to be killed' });
    expect(isAlive(bystander.pid!)).toBe(true);
  });
});
