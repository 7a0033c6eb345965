import { parseProfileDocument } from './profile.schema';
import { dumpProfileYaml, parseProfileYaml } from './profile.yaml';

const parse = (text: string) => {
  const yaml = parseProfileYaml(text);
  if (!yaml.ok) throw new Error(yaml.error);
  return parseProfileDocument(yaml.value);
};

describe('profile schema', () => {
  it('applies the document defaults to a minimal document', () => {
    // Given a document with only a name; When parsed; Then every default of docs/architecture/decisions.md#agent-profile-document is filled in
    expect(parse('name: Minimal\n')).toEqual({
      ok: true,
      metadataKeys: [],
      doc: {
        version: 1,
        name: 'Minimal',
        description: '',
        icon: 'bot',
        runtime: 'auto',
        model: {},
        instructions: {},
        tools: {},
        permissions: { mode: 'acceptEdits', allow: [], deny: [], ask: [] },
        skills: [],
        hooks: {},
        auto_apply_dir: '',
        default_cwd: '',
      },
    });
  });

  it('takes isolation and worktree settings when set, and leaves them out when not (no isolation)', () => {
    const r = parse('name: W\nisolation: worktree\nworktree:\n  setup: npm ci\n  copy: [.env, config/local.json]\n');
    expect(r.ok && [r.doc.isolation, r.doc.worktree]).toEqual(['worktree', { setup: 'npm ci', copy: ['.env', 'config/local.json'] }]);
    const plain = parse('name: P\n');
    expect(plain.ok && ['isolation' in plain.doc, 'worktree' in plain.doc]).toEqual([false, false]);
  });

  it('refuses an isolation it does not know, and a path to copy that leads out of the repository, naming it', () => {
    expect(parse('name: W\nisolation: container\n')).toEqual({ ok: false, errors: [expect.stringContaining('isolation')] });
    const out = parse('name: W\nworktree:\n  copy: [.env, ../secrets]\n');
    expect(out).toEqual({ ok: false, errors: [expect.stringContaining('"../secrets" must stay inside the tree (no .. part)')] });
    expect(parse('name: W\nworktree:\n  copy: [/etc/passwd]\n')).toEqual({ ok: false, errors: [expect.stringContaining('must be relative to the tree')] });
  });

  it('defaults hook timeouts to 60 seconds and skill sources to local', () => {
    const r = parse('name: H\nhooks:\n  PreToolUse:\n    - {type: command, command: ./x.sh, matcher: Bash}\nskills:\n  - {name: review}\n');
    expect(r.ok && r.doc.hooks.PreToolUse).toEqual([{ type: 'command', command: './x.sh', matcher: 'Bash', timeout: 60 }]);
    expect(r.ok && r.doc.skills).toEqual([{ name: 'review', source: 'local' }]);
  });

  it('accepts every permission mode and runtime of the spec', () => {
    for (const mode of ['default', 'acceptEdits', 'plan', 'auto', 'dontAsk', 'bypassPermissions']) {
      expect(parse(`name: M\npermissions: {mode: ${mode}}\n`).ok).toBe(true);
    }
    for (const runtime of ['auto', 'claude-code', 'codex', 'gemini-cli', 'opencode']) expect(parse(`name: R\nruntime: ${runtime}\n`).ok).toBe(true);
  });

  it.each([
    ['version: 3', 'version:'],
    ['runtime: cursor', 'runtime:'],
    ['hooks: {Stop: []}', 'hooks.Stop:'],
    ['hooks: {PreToolUse: [{type: command, timeout: "soon"}]}', 'hooks.PreToolUse[0].timeout:'],
    ['tools: {mcp_servers: {gh: {type: stdio, command: 7}}}', 'tools.mcp_servers.gh.command:'],
    ['tools: {mcp_servers: {gh: {type: stdio, env: {T: 1}}}}', 'tools.mcp_servers.gh.env:'],
    ['tools: {mcp_servers: [1, 2]}', 'tools.mcp_servers:'],
    ['skills: [{name: s, source: npm}]', 'skills[0].source:'],
    ['instructions: {rules: [{glob: "*.ts"}]}', 'instructions.rules[0].instruction:'],
    ['model: {fallback: gpt}', 'model.fallback:'],
    ['favourite: true', 'favourite:'],
  ])('rejects %s naming %s', (line, path) => {
    const r = parse(`name: Bad\n${line}\n`);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.join('\n')).toContain(path);
  });

  it('takes a loops section of whole numbers, and leaves it out of a document that has none', () => {
    // Given loop thresholds; Then they are the profile's, and a document without them has no loops key at all
    expect(parse('name: Patient\nloops:\n  repeated_call: 8\n  no_progress_s: 1800\n  escalate_after: 0\n')).toMatchObject({ ok: true, doc: { loops: { repeated_call: 8, no_progress_s: 1800, escalate_after: 0 } } });
    expect(Object.keys((parse('name: Plain\n') as { doc: object }).doc)).not.toContain('loops');
    // A negative, a fraction and an unknown pattern are refused, each by its path
    for (const [line, path] of [['loops: {repeated_call: -1}', 'loops.repeated_call'], ['loops: {cooldown_s: 1.5}', 'loops.cooldown_s'], ['loops: {spinning: 3}', 'loops.spinning']]) {
      const r = parse(`name: Bad\n${line}\n`);
      expect(!r.ok && r.errors.join('\n')).toContain(path);
    }
  });

  it('rejects a missing or blank name', () => {
    const missing = parse('description: x\n');
    expect(!missing.ok && missing.errors).toContain('name: is required');
    expect(parse('name: "   "\n')).toMatchObject({ ok: false, errors: [expect.stringMatching(/^name: must not be blank/)] });
  });

  it('reads hand-set metadata without using it, and reports which keys were set', () => {
    const r = parse('name: Meta\nlocked: true\nsource: builtin\ncreated_at: yesterday\n');
    expect(r).toMatchObject({ ok: true, metadataKeys: ['created_at', 'source', 'locked'] });
    expect(r.ok && Object.keys(r.doc)).not.toContain('locked');
  });
});

describe('profile YAML', () => {
  it('round-trips a document through dump and parse unchanged', () => {
    const r = parse('name: Trip\nversion: 2\ninstructions:\n  system_prompt: |\n    line one\n    line two\ntools:\n  mcp_servers:\n    gh: {type: http, url: "https://x"}\n');
    expect(r.ok).toBe(true);
    if (r.ok) expect(parse(dumpProfileYaml(r.doc))).toEqual(r);
  });

  it('refuses documents over 256 KiB, alias bombs and __proto__ keys', () => {
    expect(parseProfileYaml(`name: x\nd: ${'y'.repeat(256 * 1024)}\n`)).toMatchObject({ ok: false, error: expect.stringContaining('256 KiB') });
    const bomb = ['a: &a [x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) bomb.push(`${'a'.repeat(i + 1)}: &${'a'.repeat(i + 1)} [${Array(8).fill(`*${'a'.repeat(i)}`).join(', ')}]`);
    expect(parseProfileYaml(bomb.join('\n'))).toMatchObject({ ok: false, error: expect.stringContaining('expand beyond') });
    expect(parseProfileYaml('name: p\n__proto__: {x: 1}\n')).toMatchObject({ ok: false, error: expect.stringContaining('__proto__') });
  });

  it('refuses keys named like built-in object members anywhere, naming the path, instead of losing them or failing', () => {
    // Given keys the validator would take for the object's own members
    for (const [text, path] of [
      ['name: p\nmodel: {options: {constructor: v}}\n', 'model.options.constructor'],
      ['name: p\ntools: {mcp_servers: {toString: {type: stdio, command: c}}}\n', 'tools.mcp_servers.toString'],
      ['name: p\ntools: {mcp_servers: {x: {type: stdio, command: c, env: {valueOf: v}}}}\n', 'tools.mcp_servers.x.env.valueOf'],
    ]) {
      // When parsed; Then a schema error naming the key
      expect(parse(text)).toEqual({ ok: false, errors: [`${path}: this key name is not allowed (it names a built-in object member)`] });
    }
  });

  it('allows a few harmless aliases', () => {
    expect(parseProfileYaml('a: &deny [Bash, Write]\nb: *deny\n')).toEqual({ ok: true, value: { a: ['Bash', 'Write'], b: ['Bash', 'Write'] } });
  });

  it('reports invalid YAML with its position', () => {
    expect(parseProfileYaml('name: [oops\n')).toMatchObject({ ok: false, error: expect.stringMatching(/\(\d+:\d+\)/) });
  });
});
