import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Page } from 'playwright-core';
import { GitRepo, gitRepo } from '../support/git-repo';
import { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EDITOR = join(WORKERS, 'git-editor.js');

describeInBrowser("a worktree session's diff, live, and its merge, in Chromium", () => {
  const reaper = new WorkerReaper();
  const harness = dashboardHarness({ viewport: { width: 1280, height: 900 } });
  let t: TestApp;
  let page: Page;
  let repo: GitRepo;
  beforeEach(() => {
    ({ t, page } = harness);
    repo = gitRepo({ 'app.js': 'const answer = 41;\nconsole.log(answer);\n', 'README.md': 'hello\n' });
  });
  afterEach(async () => {
    for (const s of (await t.inject({ method: 'GET', url: '/api/v1/coding-sessions' })).json().sessions as Json[]) reaper.track(s.pid);
    reaper.killAll();
    repo.remove();
  });

  const api = async (method: 'GET' | 'POST', url: string, payload?: object) => (await t.inject({ method, url: `/api/v1${url}`, payload })).json() as Json;
  const start = async (title: string, step: object, isolation = 'worktree') => {
    const s = await api('POST', '/coding-sessions', { title, runtime: 'command', command: process.execPath, args: [EDITOR, JSON.stringify(step)], cwd: repo.path, isolation });
    await waitFor(async () => (await api('GET', `/coding-sessions/${s.id}`)).state === 'working', { what: `${title} working` });
    return s;
  };
  const openSessions = async () => {
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByRole('heading', { name: /^Sessions/ }).waitFor();
  };

  it('shows the changed files and the patch unified and side by side, follows the worker\'s next edit, and merges from the page', async () => {
    const s = await start('Answer', { write: { 'app.js': 'const answer = 42;\nconsole.log(answer);\n' }, commit: 'the right answer' });
    await waitFor(async () => (await api('GET', `/coding-sessions/${s.id}/diff`)).ahead === 1, { what: 'the commit' });
    await openSessions();
    const row = page.locator(`[data-session="${s.id}"]`);
    await row.getByText(`worktree ${s.worktree.branch}`).waitFor();
    await row.getByRole('button', { name: `Open ${s.alias}` }).click();

    const changes = row.getByRole('region', { name: `Changes of ${s.alias}` });
    await changes.getByRole('list', { name: 'Changed files' }).getByRole('button', { name: 'app.js' }).waitFor();
    await changes.getByText('1 ahead').waitFor();
    await changes.getByRole('list', { name: 'Commits' }).getByText('the right answer').waitFor();
    const patch = changes.getByRole('region', { name: 'Diff of app.js' });
    await patch.locator('tr.diff-del', { hasText: 'const answer = 41;' }).waitFor();
    await patch.locator('tr.diff-add', { hasText: 'const answer = 42;' }).waitFor();
    await screenshot(page, 'worktree-diff-unified');

    await changes.getByRole('radio', { name: 'Side by side' }).check();
    const row1 = patch.locator('table.split tr', { hasText: 'const answer = 41;' });
    await row1.waitFor();
    // The removed line faces the line added in its place, on the same row.
    expect(await row1.locator('td.code').allInnerTexts()).toEqual(['- const answer = 41;', '+ const answer = 42;']);
    await screenshot(page, 'worktree-diff-side-by-side');

    // The worker edits on: the view follows without a reload.
    await api('POST', `/coding-sessions/${s.id}/messages`, { text: JSON.stringify({ write: { 'notes.md': '# notes\nlive edit\n' } }) });
    await changes.getByRole('list', { name: 'Changed files' }).getByRole('button', { name: 'notes.md' }).waitFor({ timeout: 15000 });
    await changes.getByRole('region', { name: 'Diff of notes.md' }).getByText('live edit').waitFor();
    await changes.getByRole('list', { name: 'Changed files' }).getByText('not committed').waitFor();

    // One file alone, on demand.
    await changes.getByRole('button', { name: 'app.js' }).click();
    await changes.getByRole('region', { name: 'Diff of notes.md' }).waitFor({ state: 'detached' });
    await screenshot(page, 'worktree-diff-one-file');

    // Merging needs the uncommitted note committed first: the refusal names it.
    await row.getByRole('button', { name: `Merge ${s.alias} into main` }).click();
    await row.getByRole('alert').getByText(/uncommitted changes.*notes\.md/).waitFor();
    await api('POST', `/coding-sessions/${s.id}/messages`, { text: JSON.stringify({ commit: 'notes' }) });
    await waitFor(async () => (await api('GET', `/coding-sessions/${s.id}/diff`)).ahead === 2, { what: 'the second commit' });
    await row.getByRole('button', { name: `Merge ${s.alias} into main` }).click();
    await waitFor(() => existsSync(join(repo.path, 'notes.md')), { what: 'the merge into the main checkout' });
    expect(repo.read('app.js')).toBe('const answer = 42;\nconsole.log(answer);\n');
    await waitFor(async () => (await api('GET', `/coding-sessions/${s.id}`)).worktree.merged !== null, { what: 'the merge recorded' });
  });

  it('starts a session with isolation from the form, and warns on both sessions sharing one checkout', async () => {
    const one = await start('Shared one', {}, 'none');
    const two = await start('Shared two', {}, 'none');
    await openSessions();
    for (const s of [one, two]) {
      const other = s === one ? two : one;
      await page.locator(`[data-session="${s.id}"]`).getByRole('note').getByText(`Shares the git work tree ${repo.path} with ${other.alias}`).waitFor();
    }
    await screenshot(page, 'sessions-shared-work-tree');

    const form = page.getByRole('form', { name: 'Start a session' });
    await form.getByLabel('Runtime').selectOption('command');
    await form.getByLabel('Title (optional)').fill('From the form');
    await form.getByLabel('Working folder').fill(repo.path);
    await form.getByLabel('Command', { exact: true }).fill(process.execPath);
    await form.getByLabel('Arguments (one a line)').fill(EDITOR);
    await form.getByLabel('Isolation').selectOption('worktree');
    await form.getByLabel('Base (branch, tag or commit)').fill('main');
    await form.getByRole('button', { name: 'Start the session' }).click();
    const started = await form.getByRole('status').textContent();
    const alias = /Started (w\d+)/.exec(started ?? '')?.[1];
    const created = ((await api('GET', '/coding-sessions')).sessions as Json[]).find((s) => s.alias === alias) as Json;
    expect(created).toMatchObject({ isolation: 'worktree', worktree: { base_ref: 'main', branch: `brainstem/${alias}-from-the-form` } });
    // An isolated session shares no work tree: no warning on it.
    await page.locator(`[data-session="${created.id}"]`).waitFor();
    expect(await page.locator(`[data-session="${created.id}"]`).getByRole('note').count()).toBe(0);
  });
});
