import { parse } from 'smol-toml';
import { EmittedFile, emitProfile } from '../../profiles/emitters';
import { normalizeDocument } from '../../profiles/profile.schema';
import { CODEX_CONFIG_FILE, codexSessionArgs } from './codex-profile';

const ctx = { profileId: 'bare', serviceUrl: 'http://127.0.0.1:1', skills: [] };

/** The `-c` overrides as codex reads them: each value parsed as TOML, set at its dotted path. */
function applyOverrides(args: string[]): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i += 2) {
    expect(args[i]).toBe('-c');
    const at = args[i + 1].indexOf('=');
    const path = args[i + 1].slice(0, at).split('.');
    let table = config;
    for (const key of path.slice(0, -1)) table = (table[key] ??= {}) as Record<string, unknown>;
    table[path[path.length - 1]] = parse(`v = ${args[i + 1].slice(at + 1)}`).v;
  }
  return config;
}

const configFile = (content: string): EmittedFile[] => [{ path: CODEX_CONFIG_FILE, content, merge: 'toml' }];

describe('codexSessionArgs', () => {
  it('given a bare profile, then each emitted setting is one override at its dotted path', () => {
    const doc = normalizeDocument({ name: 'Bare' });
    expect(codexSessionArgs(doc, emitProfile('codex', doc, ctx).files)).toEqual([
      '-c',
      'approval_policy="on-request"',
      '-c',
      'sandbox_mode="workspace-write"',
      '-c',
      'mcp_servers.brainstem.url="http://127.0.0.1:1/mcp"',
      '-c',
      'mcp_servers.brainstem.bearer_token_env_var="BRAINSTEM_TOKEN"',
      '-c',
      'mcp_servers.brainstem.default_tools_approval_mode="approve"',
      '-c',
      'mcp_servers.brainstem.env_http_headers.X-Brainstem-Session="BRAINSTEM_SESSION_ID"',
    ]);
  });

  it('given a full profile, then the overrides read back as TOML are the emitted config plus the instructions', () => {
    const prompt = 'Say "hi"\\ then\nnew line, tab\t, DEL \x7f, é 漢字 🙂';
    const doc = normalizeDocument({
      name: 'Full',
      model: { model: 'gpt-5-codex', options: { reasoning_effort: 'high' } },
      instructions: { system_prompt: prompt },
      tools: { mcp_servers: { gh: { type: 'stdio', command: 'npx', args: ['-y', 'gh-mcp'], env: { GH_TOKEN: '${GH_TOKEN}' } } } },
    });
    const files = emitProfile('codex', doc, ctx).files;
    const config = applyOverrides(codexSessionArgs(doc, files));
    expect(config).toMatchObject({ model: 'gpt-5-codex', model_reasoning_effort: 'high', mcp_servers: { gh: { command: 'npx', args: ['-y', 'gh-mcp'] } } });
    const { developer_instructions: instructions, ...rest } = config;
    expect(rest).toEqual(parse(files.find((f) => f.path === CODEX_CONFIG_FILE)!.content));
    expect(instructions).toBe(prompt);
  });

  it('given a table whose keys cannot be dotted, then it goes whole as an inline table; an empty table is left out', () => {
    const args = codexSessionArgs(normalizeDocument({ name: 'Bare' }), configFile('[a]\n"x.y" = 1\nz = [true, 2.5]\n\n[b]\n'));
    expect(args).toEqual(['-c', 'a={"x.y" = 1, z = [true, 2.5]}']);
    expect(applyOverrides(args)).toEqual({ a: { 'x.y': 1, z: [true, 2.5] } });
  });
});
