import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Page } from 'playwright-core';
import { tempDir } from '../support/temp-dir';
import { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

const API = '/api/v1/agent-profiles';

/** The profiles view in one Chromium, one page at a time: the machine has two cores. */
describeInBrowser('the dashboard profiles view in Chromium', () => {
  const target = tempDir('brainstem-apply-target-');
  const harness = dashboardHarness({ viewport: { width: 1100, height: 900 } });
  let t: TestApp;
  let page: Page;
  beforeEach(() => ({ t, page } = harness));
  afterAll(() => target.remove());

  const profile = async (id: string) => (await t.inject({ method: 'GET', url: `${API}/${id}` })).json();
  const openProfiles = async (): Promise<void> => {
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Profiles' }).click();
    await page.getByRole('heading', { name: 'Profiles', exact: true }).waitFor();
  };

  it('Given a saved profile, When an edit breaks it, Then the lint error shows before saving; When fixed and saved, Then the service has the fix', async () => {
    const created = await t.inject({ method: 'POST', url: API, payload: { name: 'Team reviewer', version: 2, icon: 'eye', permissions: { mode: 'acceptEdits' } } });
    expect(created.statusCode).toBe(201);
    await openProfiles();
    // The list shows the built-ins' marks and the new profile.
    const list = page.getByRole('list', { name: 'Profiles' });
    await list.getByRole('button', { name: /Coding Assistant.*builtin.*locked.*default/ }).waitFor();
    await list.getByRole('button', { name: /Team reviewer/ }).click();
    const lint = page.getByRole('status', { name: 'Lint' });
    await lint.getByText('Lint: no problems.').waitFor();

    // An empty name and then bypassPermissions in a shared profile: each shows as a lint error, nothing is saved.
    const name = page.getByLabel('Name', { exact: true });
    await name.fill('');
    await lint.locator('li.error').filter({ hasText: 'name' }).first().waitFor();
    await name.fill('Team reviewer');
    await page.getByLabel('Permission mode').selectOption('bypassPermissions');
    await lint.locator('li.error').filter({ hasText: 'bypassPermissions is not allowed in a shared profile' }).waitFor();
    await page.getByLabel('Ask rules').fill('Bash(git push *)\n<em>not markup</em>');
    await screenshot(page, 'profiles-lint-error');
    expect((await profile('team-reviewer')).permissions.mode).toBe('acceptEdits');

    // Fixed: lint is clean again, and Save stores the edit, ask rules included (typed markup stays text).
    await page.getByLabel('Permission mode').selectOption('plan');
    await lint.getByText('Lint: no problems.').waitFor();
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved team-reviewer.' }).waitFor();
    const saved = await profile('team-reviewer');
    expect(saved.permissions).toMatchObject({ mode: 'plan', ask: ['Bash(git push *)', '<em>not markup</em>'] });
    expect(await page.locator('em').count()).toBe(0);

    // A locked built-in is read-only and duplicated to edit.
    await list.getByRole('button', { name: /Researcher/ }).click();
    await page.getByText('This profile is locked').waitFor();
    expect(await page.getByRole('button', { name: 'Save profile' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { name: 'Profile researcher-copy' }).waitFor();
    await page.getByRole('button', { name: 'Save profile' }).waitFor();
  });

  it('Given a file on disk the profile would change, When previewed, Then a line diff shows; When applied, Then drift is refused until forced', async () => {
    // Given a project whose settings.json and agent file are the user's own
    const dir = target.path;
    mkdirSync(join(dir, '.claude/agents'), { recursive: true });
    writeFileSync(join(dir, '.claude/settings.json'), '{\n  "model": "opus"\n}\n');
    writeFileSync(join(dir, '.claude/agents/code-reviewer.md'), 'my own reviewer\n');
    await openProfiles();
    await page.getByRole('list', { name: 'Profiles' }).getByRole('button', { name: /Code Reviewer/ }).click();
    await page.getByLabel('Apply into directory').fill(dir);
    await page.getByLabel('Apply for runtime').selectOption('claude-code');
    await page.getByRole('button', { name: 'Preview' }).click();

    // Then the settings diff keeps the user's line and adds the profile's, and the agent file's old text is removed
    const settings = page.getByLabel('Diff of .claude/settings.json');
    await settings.waitFor();
    expect(await settings.locator('.diff-add').count()).toBeGreaterThan(0);
    expect(await settings.locator('.diff-del', { hasText: '"model": "opus"' }).count()).toBe(1);
    const agent = page.getByLabel('Diff of .claude/agents/code-reviewer.md');
    expect(await agent.locator('.diff-del').allTextContents()).toEqual(['- my own reviewer\n']);
    expect(await page.getByLabel('Diff of .mcp.json').locator('.diff-del').count()).toBe(0);
    await page.locator('summary', { hasText: '.claude/agents/code-reviewer.md' }).getByText('drift').waitFor();
    await screenshot(page, 'profiles-apply-preview');

    // When applied: drift is refused and nothing written; with force, it is written
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'apply with force' }).waitFor();
    expect(readFileSync(join(dir, '.claude/agents/code-reviewer.md'), 'utf8')).toBe('my own reviewer\n');
    await screenshot(page, 'profiles-apply-drift');
    await page.getByRole('button', { name: 'Apply anyway (force)' }).click();
    await page.getByRole('status').filter({ hasText: 'Applied:' }).waitFor();
    await waitFor(async () => readFileSync(join(dir, '.claude/agents/code-reviewer.md'), 'utf8') !== 'my own reviewer\n', { what: 'the forced write' });
    expect(JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8')).model).toBe('opus');
  });

  it('Given a directory, When bound to a profile from the page, Then the service lists the binding; When unbound, Then it is gone', async () => {
    await openProfiles();
    const bindings = page.getByRole('region', { name: 'Project bindings' });
    await bindings.getByLabel('Project directory').fill(target.path);
    await bindings.getByLabel('Profile').selectOption('researcher');
    await bindings.getByRole('button', { name: 'Bind' }).click();
    await bindings.getByRole('button', { name: `Unbind ${target.path}` }).waitFor();
    expect((await t.inject({ method: 'GET', url: `${API}/project-binding` })).json().bindings).toEqual([{ project_dir: target.path, profile_id: 'researcher' }]);
    await screenshot(page, 'profiles-bindings');
    await bindings.getByRole('button', { name: `Unbind ${target.path}` }).click();
    await bindings.getByText('No directory is bound to a profile.').waitFor();
    expect((await t.inject({ method: 'GET', url: `${API}/project-binding` })).json().bindings).toEqual([]);
  });
});
