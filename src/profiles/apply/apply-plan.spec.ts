import { EmittedFile } from '../emitters';
import { mergeFile, nextManifest, parentDirs, parseManifest, planFiles, planWithdrawn, selectManifest, sha256, tomlHasComment, withdraw } from './apply-plan';

const settings: EmittedFile = { path: '.claude/settings.json', content: '{"permissions":{"defaultMode":"plan"}}', merge: 'json' };

describe('apply plan', () => {
  it('merges JSON: the profile sets its keys, the user keeps theirs, arrays are replaced', () => {
    // Given a user file with foreign keys; When merged; Then both are present
    const merged = JSON.parse(mergeFile(settings, '{"env":{"A":"1"},"permissions":{"defaultMode":"default","allow":["Read"]}}', 'p'));
    expect(merged).toEqual({ env: { A: '1' }, permissions: { defaultMode: 'plan', allow: ['Read'] } });
  });

  it('keeps the user formatting when the merge changes no value', () => {
    const current = '{ "permissions": { "defaultMode": "plan" } }';
    expect(mergeFile(settings, current, 'p')).toBe(current);
  });

  it('refuses to merge into a file that does not parse, naming it', () => {
    expect(() => mergeFile(settings, '{ not json', 'p')).toThrow(/\.claude\/settings\.json exists but does not parse/);
  });

  it('replaces its own marked block and appends one when absent', () => {
    const block: EmittedFile = { path: 'AGENTS.md', content: '<!-- brainstem:profile p begin -->\nnew\n<!-- brainstem:profile p end -->\n', merge: 'block' };
    expect(mergeFile(block, '# Mine\n', 'p')).toBe(`# Mine\n\n${block.content}`);
    expect(mergeFile(block, `top\n<!-- brainstem:profile p begin -->\nold\n<!-- brainstem:profile p end -->\nbottom\n`, 'p')).toBe(`top\n${block.content}bottom\n`);
  });

  it('classifies files: create, unchanged, update, and drift when the file changed since the manifest', () => {
    // Given a manifest from a previous apply
    const owned = (path: string, content: string): EmittedFile => ({ path, content, merge: 'owned' });
    const emitted = [owned('a', 'A2'), owned('b', 'B'), owned('c', 'C2'), owned('d', 'D2')];
    const manifest = { profile_id: 'p', runtime: 'claude-code', files: { b: sha256('B'), c: sha256('C1'), d: sha256('D1') } };
    const existing = new Map<string, string | null>([['a', null], ['b', 'B'], ['c', 'C1'], ['d', 'D-edited']]);
    // When planned; Then
    expect(planFiles(emitted, existing, manifest, 'p').map((f) => f.action)).toEqual(['create', 'unchanged', 'update', 'drift']);
    expect(nextManifest('p', 'claude-code', planFiles(emitted, existing, null, 'p')).files.d).toBe(sha256('D2'));
  });

  it('plans a whole file Brainstem did not write as drift when applying would replace it, never a merged one', () => {
    // Given whole files already there: one the user wrote, one identical to the emission, one a previous apply found identical
    const owned = (path: string, content: string): EmittedFile => ({ path, content, merge: 'owned' });
    const emitted = [owned('users.md', 'ours'), owned('same.md', 'S'), owned('found.md', 'F2'), owned('mine.md', 'M2'), settings];
    const manifest = { profile_id: 'p', runtime: 'claude-code', files: { 'found.md': sha256('F1'), 'mine.md': sha256('M1') }, owned: ['mine.md'] };
    const existing = new Map<string, string | null>([['users.md', 'theirs'], ['same.md', 'S'], ['found.md', 'F1'], ['mine.md', 'M1'], [settings.path, '{"env":{}}']]);
    // When planned with no manifest, then with that manifest
    const first = planFiles(emitted, existing, null, 'p');
    const later = planFiles(emitted, existing, manifest, 'p');
    // Then only the files that are not Brainstem's and would be replaced are drift; a merged file is an update
    expect(first.map((f) => [f.action, f.reason])).toEqual([
      ['drift', 'not_written_by_brainstem'],
      ['unchanged', undefined],
      ['drift', 'not_written_by_brainstem'],
      ['drift', 'not_written_by_brainstem'],
      ['update', undefined],
    ]);
    expect(later.map((f) => f.reason)).toEqual(['not_written_by_brainstem', undefined, 'not_written_by_brainstem', undefined, undefined]);
    expect(later[3].action).toBe('update');
  });

  it('withdraws what the last apply set and the profile no longer sets, keeping what the user set or changed', () => {
    // Given the last emission and a file the user added to since
    const previous = { permissions: { defaultMode: 'plan', allow: ['Bash(*)'] }, model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash' }] } };
    const current = { permissions: { defaultMode: 'plan', allow: ['Bash(*)'], deny: ['Read(.env)'] }, model: 'sonnet', hooks: { PreToolUse: [{ matcher: 'Bash' }] }, env: { A: '1' } };
    // When the profile now emits only defaultMode
    const next = { permissions: { defaultMode: 'plan' } };
    // Then allow and the hook go (and the hooks object we emptied), the user's deny, env and changed model stay
    expect(withdraw(current, previous, next)).toEqual({ permissions: { defaultMode: 'plan', deny: ['Read(.env)'] }, model: 'sonnet', env: { A: '1' } });
    expect(withdraw(current, undefined, next)).toBe(current);
  });

  it('re-applies a narrowed profile: the merged file loses the revoked keys; the manifest keeps the new fragment', () => {
    const wide: EmittedFile = { path: '.mcp.json', content: '{"mcpServers":{"brainstem":{"type":"http"},"gh":{"command":"gh-mcp"}}}', merge: 'json' };
    const narrow: EmittedFile = { ...wide, content: '{"mcpServers":{"brainstem":{"type":"http"}}}' };
    const first = planFiles([wide], new Map([[wide.path, '{"mcpServers":{"mine":{"command":"x"}}}']]), null, 'p');
    const manifest = nextManifest('p', 'claude-code', first);
    expect(manifest.emitted).toEqual({ '.mcp.json': wide.content });
    const [again] = planFiles([narrow], new Map([[wide.path, first[0].content]]), manifest, 'p');
    expect(again.action).toBe('update');
    expect(JSON.parse(again.content)).toEqual({ mcpServers: { mine: { command: 'x' }, brainstem: { type: 'http' } } });
  });

  it('reads a manifest whose fragments are not all text as one without fragments', () => {
    expect(parseManifest('{"profile_id":"p","runtime":"codex","files":{},"emitted":{"a":1}}')).toEqual({ profile_id: 'p', runtime: 'codex', files: {} });
    expect(parseManifest('{"profile_id":"p","runtime":"codex","files":{},"emitted":{"a":"x = 1"}}')?.emitted).toEqual({ a: 'x = 1' });
  });

  it('merges into a TOML file holding a 64-bit integer, keeping it exact', () => {
    const config: EmittedFile = { path: '.codex/config.toml', content: 'model = "gpt-5"\n', merge: 'toml' };
    const merged = mergeFile(config, 'big = 9007199254740993\nmodel = "o3"\n', 'p');
    expect(merged).toContain('big = 9007199254740993');
    expect(merged).toContain('model = "gpt-5"');
    expect(mergeFile(config, 'big = 9007199254740993\nmodel = "gpt-5"\n', 'p')).toBe('big = 9007199254740993\nmodel = "gpt-5"\n');
  });

  it('plans a TOML file holding comments as drift when the merge would rewrite it, and leaves it alone when it would not', () => {
    // Given a config.toml with a comment
    const config: EmittedFile = { path: '.codex/config.toml', content: 'model = "gpt-5"\n', merge: 'toml' };
    const plan = (current: string) => planFiles([config], new Map([[config.path, current]]), null, 'p')[0];
    // Then a merge that changes a value is drift, naming the comments; one that changes nothing is unchanged
    expect(plan('# pinned\nmodel = "o3"\n')).toMatchObject({ action: 'drift', reason: 'comments_would_be_lost' });
    expect(plan('# pinned\nmodel = "gpt-5"\n').action).toBe('unchanged');
    expect(plan('model = "o3"\n').action).toBe('update');
  });

  it('finds a TOML comment only outside strings of every kind', () => {
    // Given documents whose # is inside a string; Then no comment
    for (const text of [
      'a = "x # y"\n',
      "a = 'x # y'\n",
      'a = "esc \\" # still string"\n',
      'a = """\n# line in a string\n"""\n',
      "a = '''\n# literal\n'''\n",
      'a = """q""""\nb = "#"\n',
      '"k#ey" = ""\nb = "#"\n',
    ]) {
      expect([text, tomlHasComment(text)]).toEqual([text, false]);
    }
    // And a # after any of them, or on its own line, is one
    for (const text of ['# top\na = 1\n', 'a = "x" # why\n', 'a = """\n"""\n# after\n', "a = ''\n#\n", '[t] # table\n']) {
      expect([text, tomlHasComment(text)]).toEqual([text, true]);
    }
  });

  it('records as owned the whole files it wrote, not an identical one it found there; keeps that across re-applies', () => {
    // Given a first apply that creates one whole file and finds another already identical
    const owned = (path: string, content: string): EmittedFile => ({ path, content, merge: 'owned' });
    const emitted = [owned('mine.md', 'M'), owned('found.md', 'F'), settings];
    const first = nextManifest('p', 'claude-code', planFiles(emitted, new Map([['found.md', 'F']]), null, 'p'), null, { created: ['.claude'], removed: [] });
    // Then only the created one is owned, with the directory made for it
    expect(first).toMatchObject({ owned: ['mine.md'], dirs: ['.claude'] });
    // When re-applied unchanged; Then ownership and directories carry over
    const existing = new Map([['mine.md', 'M'], ['found.md', 'F'], [settings.path, settings.content]]);
    expect(nextManifest('p', 'claude-code', planFiles(emitted, existing, first, 'p'), first)).toEqual(first);
  });

  it('plans the removal of withdrawn whole files unchanged since, keeps edited or unowned ones', () => {
    // Given a manifest of a previous apply that wrote a.md and b.md and found c.md
    const manifest = { profile_id: 'p', runtime: 'claude-code', files: { 'a.md': sha256('A'), 'b.md': sha256('B'), 'c.md': sha256('C'), 'gone.md': sha256('G') }, owned: ['a.md', 'b.md', 'gone.md'] };
    const existing = new Map<string, string | null>([['a.md', 'A'], ['b.md', 'B edited'], ['c.md', 'C'], ['gone.md', null]]);
    // When this apply emits none of them; Then
    expect(planWithdrawn([], existing, manifest)).toEqual([
      { path: 'a.md', content: '', action: 'remove' },
      { path: 'b.md', content: 'B edited', action: 'kept' },
      { path: 'c.md', content: 'C', action: 'kept' },
    ]);
    // And files still emitted withdraw nothing
    expect(planWithdrawn([{ path: 'a.md', content: 'A', merge: 'owned' }], existing, manifest).map((f) => f.path)).not.toContain('a.md');
    // And a manifest from before ownership was recorded removes nothing
    const { owned: _owned, ...legacy } = manifest;
    expect(planWithdrawn([], existing, legacy).map((f) => f.action)).toEqual(['kept', 'kept', 'kept']);
  });

  it("reads a runtime's own manifest, else the legacy per-profile one only when it is that runtime's", () => {
    // Given a legacy manifest written by a claude-code apply, and a codex one
    const claude = '{"profile_id":"p","runtime":"claude-code","files":{".claude/settings.json":"h"}}';
    const codex = '{"profile_id":"p","runtime":"codex","files":{}}';
    // Then each runtime's own file wins; the legacy one counts only for the runtime it records
    expect(selectManifest('codex', codex, claude)).toEqual({ manifest: { profile_id: 'p', runtime: 'codex', files: {} }, legacy: false });
    expect(selectManifest('claude-code', null, claude)).toMatchObject({ manifest: { runtime: 'claude-code' }, legacy: true });
    expect(selectManifest('codex', null, claude)).toEqual({ manifest: null, legacy: false });
  });

  it('reads a manifest without a runtime as the runtime whose config file it lists, and ignores it when that is unclear', () => {
    expect(parseManifest('{"profile_id":"p","files":{".codex/config.toml":"h","AGENTS.md":"h"}}')?.runtime).toBe('codex');
    expect(parseManifest('{"profile_id":"p","files":{"AGENTS.md":"h"}}')).toBeNull();
    expect(parseManifest('{"profile_id":"p","runtime":7,"files":{".claude/settings.json":"h","opencode.json":"h"}}')).toBeNull();
  });

  it('reads ownership lists that are not all text as absent', () => {
    expect(parseManifest('{"profile_id":"p","runtime":"codex","files":{},"owned":[1],"dirs":"x"}')).toEqual({ profile_id: 'p', runtime: 'codex', files: {} });
    expect(parentDirs('.claude/skills/s/scripts/run.sh')).toEqual(['.claude/skills/s/scripts', '.claude/skills/s', '.claude/skills', '.claude']);
  });
});
