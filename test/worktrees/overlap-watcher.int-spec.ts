import { resolve } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { SessionStatus } from '../../src/sessions/session.status';
import { OverlapWatcher } from '../../src/worktrees/overlap-watcher';
import { GitRepo, gitRepo } from '../support/git-repo';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EDITOR = resolve(WORKERS, 'git-editor.js');
const STREAM = 'worktree-overlaps-local';

/**
 * Predicted collisions journaled and woken for, with command workers in worktrees of a real repository: two that edit
 * the same line get worktree.conflict_predicted (once, however often it is looked at), supervision wakes the brain
 * with conflict_predicted, and the pair is cleared once one of them is discarded.
 */
describe('the overlap watcher, with the real git CLI', () => {
  jest.setTimeout(120_000);
  const reaper = new WorkerReaper();
  const t = useTestApp({ BRAINSTEM_WORKTREES_OVERLAP_INTERVAL_S: '1', BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100' }, { beforeClose: () => reaper.killAll() });
  let repo: GitRepo;
  afterAll(() => repo?.remove());

  const api = async (method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: Json }> => {
    const res = await t.inject({ method, url: `/api/v1${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  };
  const facts = async () => (await t.app.get<Journal>(JOURNAL).readStream(STREAM)).map((e) => ({ type: e.type, data: e.data as Json }));
  const start = async (title: string, step: object) => {
    const created = await api('POST', '/coding-sessions', { title, runtime: 'command', command: process.execPath, args: [EDITOR, JSON.stringify(step)], cwd: repo.path, isolation: 'worktree' });
    expect(created.status).toBe(201);
    await waitFor(async () => ((await api('GET', `/coding-sessions/${created.body.id}/diff`)).body.files ?? []).some((f: Json) => f.path === 'shared.txt'), { what: `${title}'s edit` });
    // Its worker starts once its worktree is ready, after the create answered.
    const status = (await api('GET', `/coding-sessions/${created.body.id}`)).body as SessionStatus;
    reaper.track(status.pid);
    return status;
  };

  it('given two worktree sessions editing the same line, then the conflict is journaled once and wakes the brain; discarding one clears it', async () => {
    repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n' });
    expect((await api('POST', '/session-os/main-brain/autonomous', { enabled: true })).status).toBe(200);
    const a = await start('Edit A', { write: { 'shared.txt': 'one\ntwo by a\nthree\n' }, commit: 'a' });
    const b = await start('Edit B', { write: { 'shared.txt': 'one\ntwo by b\nthree\n' } });
    const predicted = await waitFor(async () => (await facts()).find((f) => f.type === 'worktree.conflict_predicted'), { timeoutMs: 30_000, what: 'the conflict predicted' });
    expect(predicted.data).toEqual({ repo: repo.path, session_id: a.id, b: b.id, files: ['shared.txt'], conflicting_paths: ['shared.txt'] });
    const round = await waitFor(
      async () => ((await api('GET', '/session-os/main-brain/rounds')).body.rounds as Json[]).find((r) => r.reasons.some((x: Json) => x.trigger === 'conflict_predicted')),
      { timeoutMs: 30_000, what: 'a round for the conflict' },
    );
    const prompt = (await api('GET', `/session-os/main-brain/rounds/${round.id}`)).body.prompt as string;
    expect(prompt).toContain(`${a.alias} (${a.id}) would conflict on merge`);
    expect(prompt).toContain(`Brainstem saw: merging it and ${b.alias} (${b.id}) would conflict in 1 path`);
    // Looked at again (as each second while they work): the same answer journals nothing more.
    const count = (await facts()).length;
    await t.app.get(OverlapWatcher).look();
    await t.app.get(OverlapWatcher).look();
    expect((await facts()).length).toBe(count);

    expect((await api('POST', `/coding-sessions/${b.id}/stop`, {})).status).toBeLessThan(300);
    await waitFor(async () => ((await api('GET', `/coding-sessions/${b.id}`)).body.state === 'exited' ? true : undefined), { what: 'b exited' });
    const discarded = await api('POST', `/coding-sessions/${b.id}/discard`, { force: true });
    expect(discarded.status).toBeLessThan(300);
    const cleared = await waitFor(async () => (await facts()).find((f) => f.type === 'worktree.overlap_cleared'), { timeoutMs: 30_000, what: 'the pair cleared' });
    expect(cleared.data).toEqual({ repo: repo.path, session_id: a.id, b: b.id });
  });
});
