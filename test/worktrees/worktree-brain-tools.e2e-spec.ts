import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GitRepo, gitRepo } from '../support/git-repo';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BASE = '/api/v1/session-os/main-brain';

describe("the main brain's session_diff and merge_session, merge and discard held by the human gate", () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({}, { beforeClose: () => reaper.killAll() });
  let repo: GitRepo;
  beforeAll(() => {
    repo = gitRepo({ 'a.txt': 'a\n' });
  });
  afterAll(() => {
    reaper.killAll();
    repo.remove();
  });

  const brain = async (tool: string, args: object): Promise<{ status: number; body: Json }> => {
    const res = await t.rawInject({ method: 'POST', url: `${BASE}/tools/${tool}`, payload: args, headers: t.auth('main_brain') });
    return { status: res.statusCode, body: res.json() };
  };
  const user = async (method: 'GET' | 'POST', url: string, payload?: object) => (await t.inject({ method, url, payload })).json() as Json;
  const worker = async (title: string, step: object) => {
    const s = user('POST', '/api/v1/coding-sessions', { title, runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'git-editor.js'), JSON.stringify(step)], cwd: repo.path, isolation: 'worktree' });
    const created = await s;
    await waitFor(async () => ((await user('GET', `/api/v1/coding-sessions/${created.id}/diff`)).ahead ?? 0) >= 1, { what: `${title} to commit` });
    const status = await user('GET', `/api/v1/coding-sessions/${created.id}`);
    reaper.track(status.pid);
    return status;
  };

  const pending = async () => (await user('GET', `${BASE}/confirmations?status=pending`)).confirmations as Json[];
  const opsRequested = async (id: string) =>
    ((await user('GET', `/api/v1/journal/events?stream=session-${id}&limit=100`)).events as Json[]).filter((e) => e.type === 'session.worktree_op_requested').length;

  it('lists the tools with their arguments, and lets start_session ask for isolation', async () => {
    const tools = (await t.rawInject({ method: 'GET', url: `${BASE}/tools`, headers: t.auth('main_brain') })).json().tools as Json[];
    const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
    expect(Object.keys(byName.merge_session.parameters.properties).sort()).toEqual(['action', 'session', 'strategy']);
    expect(byName.merge_session.parameters.properties.strategy.enum).toEqual(['ff', 'merge', 'rebase']);
    expect(Object.keys(byName.session_diff.parameters.properties).sort()).toEqual(['cursor', 'file', 'limit', 'session']);
    expect(byName.start_session.parameters.properties.isolation.enum).toEqual(['none', 'worktree']);
  });

  it("reads a session's diff; its merge waits for the user and runs only once confirmed", async () => {
    const w = await worker('Brain merge', { write: { 'b.txt': 'by the worker\n' }, commit: 'add b' });
    const diff = await brain('session_diff', { session: w.alias });
    expect(diff.status).toBe(200);
    expect(diff.body.result).toMatchObject({ alias: w.alias, branch: w.worktree.branch, ahead: 1, files: [{ path: 'b.txt', change: 'added', additions: 1 }] });

    const asked = await brain('merge_session', { session: w.alias, strategy: 'ff' });
    expect(asked.body.result).toMatchObject({ status: 'waiting_for_user', what: `Merge session ${w.alias}'s branch ${w.worktree.branch} into main (strategy ff) in the checkout ${repo.path}.` });
    expect(existsSync(join(repo.path, 'b.txt'))).toBe(false);
    expect((await user('GET', `/api/v1/coding-sessions/${w.id}`)).worktree.pending_op).toBeNull();

    const confirmed = await user('POST', `${BASE}/confirmations/${asked.body.result.confirmation_id}/confirm`);
    expect(confirmed).toMatchObject({ status: 'confirmed', outcome: { ok: true, result: { alias: w.alias, worktree: { merged: { strategy: 'ff', into: 'main' } } } } });
    expect(existsSync(join(repo.path, 'b.txt'))).toBe(true);
  });

  it('holds a discard for the user too; keeping only the branch runs at once, and refuses uncommitted work (a brain never forces)', async () => {
    const w = await worker('Brain discard', { write: { 'c.txt': 'c\n' }, commit: 'add c' });
    await user('POST', `/api/v1/coding-sessions/${w.id}/stop`, { grace_ms: 1000 });
    const asked = await brain('merge_session', { session: w.alias, action: 'discard' });
    expect(asked.body.result).toMatchObject({ status: 'waiting_for_user', what: expect.stringContaining(`and delete its branch ${w.worktree.branch}`) });
    expect(existsSync(w.worktree.path)).toBe(true);
    const refused = await user('POST', `${BASE}/confirmations/${asked.body.result.confirmation_id}/refuse`, { reason: 'keep it' });
    expect(refused.status).toBe('refused');
    expect(existsSync(w.worktree.path)).toBe(true);

    repo.write('loose.txt', 'uncommitted\n', w.worktree.path);
    const dirty = await brain('merge_session', { session: w.alias, action: 'branch_only' });
    expect(dirty).toMatchObject({ status: 409, body: { code: 'worktree_dirty', details: { files: ['loose.txt'] } } });
    expect((await brain('merge_session', { session: w.alias, action: 'branch_only', force: true })).status).toBe(400);
  });

  it('answers a merge with nothing to merge (ahead 0) at once, to the brain and to the user, asking no one and journaling nothing; one with commits still asks', async () => {
    const w = await worker('Brain nothing to merge', { write: { 'd.txt': 'd\n' }, commit: 'add d' });
    expect(await pending()).toEqual([]);
    const asked = await brain('merge_session', { session: w.alias });
    expect(asked.body.result).toMatchObject({ status: 'waiting_for_user' });
    expect(await pending()).toHaveLength(1);
    await user('POST', `${BASE}/confirmations/${asked.body.result.confirmation_id}/refuse`, {});
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${w.id}/merge`, payload: { strategy: 'ff' } })).statusCode).toBe(200);
    expect((await user('GET', `/api/v1/coding-sessions/${w.id}/diff`)).ahead).toBe(0);
    const requested = await opsRequested(w.id);

    const nothing = {
      code: 'nothing_to_merge',
      message: `${w.worktree.branch} has no commit that main does not have (ahead 0): nothing to merge, nothing was changed`,
      details: { branch: w.worktree.branch, base: 'main', ahead: 0 },
    };
    for (const strategy of ['ff', 'merge', 'rebase']) {
      expect(await brain('merge_session', { session: w.alias, strategy })).toMatchObject({ status: 409, body: nothing });
      expect(await pending()).toEqual([]);
      const again = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${w.id}/merge`, payload: { strategy } });
      expect([again.statusCode, again.json()]).toEqual([409, expect.objectContaining(nothing)]);
    }
    expect(await opsRequested(w.id)).toBe(requested);
    expect((await user('GET', `/api/v1/coding-sessions/${w.id}`)).worktree).toMatchObject({ pending_op: null, last_op: { op: 'merge', ok: true } });
  });

  it('asks the user nothing for a gated call that cannot change anything: a live session\'s discard, a removed worktree, an exited session, one not held, the budget it has', async () => {
    const w = await worker('Brain no-ops', { write: { 'e.txt': 'e\n' }, commit: 'add e' });
    expect(await pending()).toEqual([]);
    expect(await brain('merge_session', { session: w.alias, action: 'discard' })).toMatchObject({ status: 409, body: { code: 'session_live' } });
    expect(await brain('release_session', { session: w.alias })).toMatchObject({ status: 200, body: { result: { alias: w.alias, unchanged: `session ${w.alias} is not held: nothing to release` } } });
    expect(await brain('set_session_budget', { session: w.alias })).toMatchObject({ status: 200, body: { result: { id: w.id, budget: null, unchanged: expect.stringContaining('already') } } });
    expect(await brain('manage_agent_profile', { action: 'delete', profile_id: 'no-such-profile' })).toMatchObject({ status: 404 });
    expect(await pending()).toEqual([]);

    await user('POST', `/api/v1/coding-sessions/${w.id}/stop`, { grace_ms: 1000 });
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${w.id}/discard`, payload: {} })).statusCode).toBe(200);
    expect(await brain('stop_session', { session: w.alias })).toMatchObject({ status: 409, body: { code: 'session_exited' } });
    for (const action of ['merge', 'discard']) expect(await brain('merge_session', { session: w.alias, action })).toMatchObject({ status: 409, body: { code: 'worktree_removed' } });
    expect(await pending()).toEqual([]);
  });
});
