import { documentOf, draftOfYamlDocument, envOf, envText, freshKey, listOf, mergePatchOf, renamedAt, valueAt, withValue, yamlDocumentOf } from './profile-draft';

describe('profile drafts', () => {
  it('Given a profile as listed, When made a draft, Then the service metadata is left out and the document kept', () => {
    const draft = documentOf({ id: 'x', name: 'X', source: 'user', locked: false, scope: 'shared', is_default: true, error: null, created_at: 't', target_runtime: 'codex', permissions: { mode: 'plan' } });
    expect(draft).toEqual({ name: 'X', target_runtime: 'codex', permissions: { mode: 'plan' } });
  });

  it('Given a draft, When a nested value is set, Then only that path changes and the original is untouched', () => {
    const before = { name: 'X', permissions: { mode: 'plan', allow: ['Read'] } };
    const after = withValue(before, ['permissions', 'deny'], ['Bash(rm *)']);
    expect(after).toEqual({ name: 'X', permissions: { mode: 'plan', allow: ['Read'], deny: ['Bash(rm *)'] } });
    expect(before.permissions).toEqual({ mode: 'plan', allow: ['Read'] });
    expect(valueAt(after, ['permissions', 'deny'])).toEqual(['Bash(rm *)']);
    expect(valueAt(after, ['model', 'model'])).toBeUndefined();
  });

  it('Given a draft, When a value is set to undefined, Then the key is removed', () => {
    expect(withValue({ name: 'X', model: { model: 'opus' } }, ['model', 'model'], undefined)).toEqual({ name: 'X', model: {} });
  });

  it('Given a list typed one item a line, When read, Then blank lines and spaces around items are dropped', () => {
    expect(listOf(' Read \n\nBash(git *)\n')).toEqual(['Read', 'Bash(git *)']);
  });
});

describe('saving a draft as a merge patch', () => {
  it('Given a saved profile, When the draft drops an MCP server and a hook event, Then the patch names them null and leaves unchanged keys out', () => {
    const saved = { name: 'X', tools: { builtin: ['Read'], mcp_servers: { gh: { type: 'stdio' }, docs: { type: 'http' } } }, hooks: { PreToolUse: [{ type: 'command' }] }, icon: 'bot' };
    const draft = { name: 'X', tools: { builtin: ['Read', 'Edit'], mcp_servers: { docs: { type: 'http' } } }, icon: 'bot' };
    expect(mergePatchOf(saved, draft)).toEqual({ tools: { builtin: ['Read', 'Edit'], mcp_servers: { gh: null } }, hooks: null });
  });

  it('Given a draft, When shown as YAML and read back, Then the runtime is `runtime` in YAML and `target_runtime` in the draft', () => {
    const yamlDoc = yamlDocumentOf({ name: 'X', target_runtime: 'codex', version: 2 });
    expect(yamlDoc).toEqual({ name: 'X', runtime: 'codex', version: 2 });
    expect(draftOfYamlDocument(yamlDoc)).toEqual({ ok: true, draft: { name: 'X', target_runtime: 'codex', version: 2 } });
    expect(draftOfYamlDocument(['a'])).toMatchObject({ ok: false });
  });
});

describe('the MCP server and hook helpers of a draft', () => {
  it('Given env lines, When read, Then each is a KEY=VALUE pair, the first = splitting, blank lines dropped', () => {
    expect(envOf('A=1\n\nB=x=y\nC\n')).toEqual({ A: '1', B: 'x=y', C: '' });
    expect(envText({ A: '1', B: 'x=y' })).toBe('A=1\nB=x=y');
    expect(envText(undefined)).toBe('');
  });

  it('Given servers, When one is renamed, Then it keeps its place and value, and the others are untouched', () => {
    const renamed = renamedAt({ a: { type: 'stdio' }, b: { type: 'http' }, c: {} }, 1, 'docs');
    expect(Object.keys(renamed)).toEqual(['a', 'docs', 'c']);
    expect(renamed.docs).toEqual({ type: 'http' });
  });

  it('Given taken names, When a fresh one is asked for, Then the first free of base, base-2, … is given', () => {
    expect(freshKey({}, 'server')).toBe('server');
    expect(freshKey({ server: 1, 'server-2': 1 }, 'server')).toBe('server-3');
  });

  it('Given a saved server and hook event the draft took out, When the patch is made, Then each is null (removed on save)', () => {
    const saved = { tools: { mcp_servers: { gh: { type: 'stdio', command: 'gh' }, docs: { type: 'http', url: 'u' } } }, hooks: { SessionStart: [{ type: 'command', command: 'x', timeout: 60 }] } };
    const draft = { tools: { mcp_servers: { docs: { type: 'http', url: 'u' } } }, hooks: {} };
    expect(mergePatchOf(saved, draft)).toEqual({ tools: { mcp_servers: { gh: null } }, hooks: { SessionStart: null } });
  });
});
