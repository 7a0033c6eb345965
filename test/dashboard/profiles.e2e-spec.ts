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

  it('Given a profile with two MCP servers and two hook events, When every other field is edited in the form and YAML and one server and one event removed, Then the profile read back has exactly that', async () => {
    const hook = { type: 'command', command: 'echo hi' };
    const created = await t.inject({
      method: 'POST',
      url: API,
      payload: {
        name: 'Every field',
        version: 2,
        tools: { mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp' }, docs: { type: 'http', url: 'https://docs.example/mcp' } } },
        hooks: { SessionStart: [hook], PreToolUse: [hook] },
      },
    });
    expect(created.statusCode).toBe(201);
    await openProfiles();
    await page.getByRole('list', { name: 'Profiles' }).getByRole('button', { name: /Every field/ }).click();
    const lint = page.getByRole('status', { name: 'Lint' });
    await lint.getByText('Lint: no problems.').waitFor();

    // The form: the model, instructions, rules, skills and directories, then one MCP server and one hook event out.
    await page.getByLabel('Model', { exact: true }).fill('opus');
    await page.getByLabel('Model provider').fill('anthropic');
    await page.getByLabel('Fallback models').fill('sonnet\nhaiku');
    await page.getByLabel('Model options (JSON)').fill('{"temperature": 0.2');
    await page.getByText('not JSON:').waitFor();
    await page.getByLabel('Model options (JSON)').fill('{"temperature": 0.2}');
    await page.getByLabel('Instruction files').fill('AGENTS.md\ndocs/style.md');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('rule 1 glob').fill('src/**/*.ts');
    await page.getByLabel('rule 1 instruction').fill('Use named exports.');
    await page.getByRole('button', { name: 'Add skill' }).click();
    await page.getByLabel('skill 1 name').fill('release-notes');
    // A local skill is checked for its SKILL.md.
    const skillDir = join(target.path, 'skills', 'release-notes');
    mkdirSync(skillDir, { recursive: true });
    writeFileSync(join(skillDir, 'SKILL.md'), '---\nname: release-notes\ndescription: Writes release notes.\n---\nWrite them.\n');
    await page.getByLabel('skill 1 source').selectOption('git');
    await page.getByLabel('skill 1 source').selectOption('local');
    await page.getByLabel('skill 1 path').fill(skillDir);
    await page.getByLabel('skill 1 version').fill('v1.2.0');
    const autoDir = join(target.path, 'auto');
    mkdirSync(autoDir, { recursive: true });
    await page.getByLabel('Auto-apply directory').fill(autoDir);
    await page.getByLabel('Default working directory').fill('/srv/project');
    expect(await page.getByLabel('MCP server 1 name').inputValue()).toBe('gh');
    await page.getByRole('button', { name: 'Remove MCP server 1' }).click();
    expect(await page.getByLabel('MCP server 1 name').inputValue()).toBe('docs');
    await page.getByRole('button', { name: 'Remove all PreToolUse hooks' }).click();
    await page.getByText('No PreToolUse hooks.').waitFor();
    await screenshot(page, 'profiles-every-field-form');

    // The YAML view shows the draft; a parse error is shown, not thrown; a fix becomes the draft and is linted.
    await page.getByRole('button', { name: 'Edit as YAML' }).click();
    const yaml = page.getByLabel('Profile YAML');
    const text = await yaml.inputValue();
    expect(text).toContain('provider: anthropic');
    expect(text).toContain('release-notes');
    expect(text).not.toContain('gh-mcp');
    await yaml.fill(`${text}\nbroken: [unclosed\n`);
    await page.getByRole('alert').filter({ hasText: 'not valid YAML' }).waitFor();
    await yaml.fill(text.replace(/^description:.*$/m, 'description: Written in YAML'));
    expect(await page.getByRole('alert').filter({ hasText: 'not valid YAML' }).count()).toBe(0);
    await yaml.fill(text.replace(/^description:.*$/m, 'description: Written in YAML').replace(/^version:.*$/m, 'version: 7'));
    await lint.locator('li.error').filter({ hasText: 'version' }).waitFor();
    await yaml.fill(text.replace(/^description:.*$/m, 'description: Written in YAML'));
    await lint.locator('li.error').filter({ hasText: 'version' }).waitFor({ state: 'detached' });
    expect(await lint.locator('li.error').allTextContents()).toEqual([]);
    await screenshot(page, 'profiles-every-field-yaml');
    await page.getByRole('button', { name: 'Edit as form' }).click();
    expect(await page.getByLabel('Description').inputValue()).toBe('Written in YAML');

    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved every-field.' }).waitFor();
    const saved = await profile('every-field');
    expect(saved.model).toEqual({ model: 'opus', provider: 'anthropic', fallback: ['sonnet', 'haiku'], options: { temperature: 0.2 } });
    expect(saved.instructions).toEqual({ files: ['AGENTS.md', 'docs/style.md'], rules: [{ glob: 'src/**/*.ts', instruction: 'Use named exports.' }] });
    expect(saved.skills).toEqual([{ name: 'release-notes', source: 'local', path: skillDir, version: 'v1.2.0' }]);
    expect(saved.auto_apply_dir).toBe(autoDir);
    expect(saved.default_cwd).toBe('/srv/project');
    expect(saved.description).toBe('Written in YAML');
    expect(saved.tools.mcp_servers).toEqual({ docs: { type: 'http', url: 'https://docs.example/mcp' } });
    expect(Object.keys(saved.hooks)).toEqual(['SessionStart']);

    // Removing the last MCP server removes the mapping too.
    await page.getByRole('button', { name: 'Remove MCP server 1' }).click();
    await page.getByRole('button', { name: 'Save profile' }).click();
    await waitFor(async () => (await profile('every-field')).tools.mcp_servers === undefined, { what: 'the last MCP server removed' });
  });

  it('Given a profile, When a hook and MCP servers are filled in through the forms and saved, Then the service has them; When removed through the forms and saved, Then they are gone; Export downloads its YAML', async () => {
    const created = await t.inject({ method: 'POST', url: API, payload: { name: 'Hooks and servers', version: 2, target_runtime: 'claude-code' } });
    expect(created.statusCode).toBe(201);
    const cspViolations: string[] = [];
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) cspViolations.push(m.text());
    });
    await openProfiles();
    await page.getByRole('list', { name: 'Profiles' }).getByRole('button', { name: /Hooks and servers/ }).click();
    const lint = page.getByRole('status', { name: 'Lint' });
    await lint.getByText('Lint: no problems.').waitFor();

    // A stdio server with arguments and environment, then an http one; a name another server has is refused, not merged.
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    await page.getByLabel('MCP server 1 name').fill('github');
    await page.getByLabel('MCP server 1 command').fill('npx');
    // Typed key by key: a line's Enter stays while the next line is typed (the draft already has the lines before it).
    await page.getByLabel('MCP server 1 arguments').click();
    await page.keyboard.type('-y\n@modelcontextprotocol/server-github');
    await page.getByLabel('MCP server 1 environment').click();
    await page.keyboard.type('GITHUB_TOKEN=abc=1\nLOG_LEVEL=debug');
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    await page.getByLabel('MCP server 2 name').fill('github');
    await page.getByRole('alert').filter({ hasText: 'another server is named github' }).waitFor();
    await page.getByLabel('MCP server 2 name').fill('docs');
    await page.getByLabel('MCP server 2 type').selectOption('http');
    await page.getByLabel('MCP server 2 URL').fill('https://docs.example/mcp');

    // A command hook before Bash with its own timeout, and an http hook at session start.
    await page.getByRole('button', { name: 'Add PreToolUse hook' }).click();
    await page.getByLabel('PreToolUse hook 1 command').fill('./scripts/check.sh');
    await page.getByLabel('PreToolUse hook 1 matcher').fill('Bash');
    await page.getByLabel('PreToolUse hook 1 timeout (s)').fill('30');
    await page.getByRole('button', { name: 'Add SessionStart hook' }).click();
    await page.getByLabel('SessionStart hook 1 type').selectOption('http');
    await page.getByLabel('SessionStart hook 1 URL').fill('http://127.0.0.1:9/session-start');
    await lint.getByText('Lint: no problems.').waitFor();
    await screenshot(page, 'profiles-hooks-mcp-form');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved hooks-and-servers.' }).waitFor();

    const saved = await profile('hooks-and-servers');
    expect(saved.tools.mcp_servers).toEqual({
      github: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: 'abc=1', LOG_LEVEL: 'debug' } },
      docs: { type: 'http', url: 'https://docs.example/mcp' },
    });
    expect(saved.hooks).toEqual({
      SessionStart: [{ type: 'http', url: 'http://127.0.0.1:9/session-start', timeout: 60 }],
      PreToolUse: [{ type: 'command', command: './scripts/check.sh', matcher: 'Bash', timeout: 30 }],
    });

    // Export: a YAML file named for the profile, with what was saved, downloaded under the page's CSP.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export YAML' }).click()]);
    expect(download.suggestedFilename()).toBe('hooks-and-servers.yaml');
    const exported = readFileSync(await download.path(), 'utf8');
    expect(exported).toMatch(/^name: Hooks and servers$/m);
    expect(exported).toContain('GITHUB_TOKEN: abc=1');
    expect(exported).toContain('./scripts/check.sh');
    expect(cspViolations).toEqual([]);

    // Removed through the forms: both servers, the one PreToolUse hook, and the SessionStart event at once.
    await page.getByRole('button', { name: 'Remove MCP server 1' }).click();
    await page.getByRole('button', { name: 'Remove MCP server 1' }).click();
    await page.getByRole('button', { name: 'Remove PreToolUse hook 1' }).click();
    await page.getByRole('button', { name: 'Remove all SessionStart hooks' }).click();
    await page.getByText('No SessionStart hooks.').waitFor();
    await page.getByRole('button', { name: 'Save profile' }).click();
    await waitFor(
      async () => {
        const after = await profile('hooks-and-servers');
        return after.tools.mcp_servers === undefined && Object.keys(after.hooks ?? {}).length === 0 ? after : undefined;
      },
      { what: 'the servers and hooks removed on the service' },
    );
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
