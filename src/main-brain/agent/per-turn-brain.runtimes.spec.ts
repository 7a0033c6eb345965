import { parse } from 'smol-toml';
import { BrainLaunch } from './brain-agent.port';
import { OPENCODE_BRAIN_AGENT, codexBrain, geminiBrain, opencodeBrain } from './per-turn-brain.runtimes';

const launch: BrainLaunch = {
  cwd: '/brain',
  env: { BRAINSTEM_TOKEN: 'secret-token' },
  mcp_url: 'http://127.0.0.1:8080/mcp',
  instructions: 'Supervise.\nSay "done" \\ when done.\u007f',
  model: 'm1',
  profile_args: [],
};

describe('codexBrain', () => {
  it('given a launch, then the MCP server, its credential by variable name and the instructions are -c overrides whose values codex reads back as written', () => {
    const { args, env, files } = codexBrain.setup(launch);
    expect(files).toEqual([]);
    expect(env).toEqual({});
    expect(args.slice(0, 1)).toEqual(['--skip-git-repo-check']);
    expect(args.slice(-2)).toEqual(['-m', 'm1']);
    const overrides = Object.fromEntries(args.filter((_, i) => args[i - 1] === '-c').map((o) => [o.slice(0, o.indexOf('=')), parse(`v = ${o.slice(o.indexOf('=') + 1)}`).v]));
    expect(overrides).toEqual({
      'mcp_servers.brainstem.url': launch.mcp_url,
      'mcp_servers.brainstem.bearer_token_env_var': 'BRAINSTEM_TOKEN',
      'mcp_servers.brainstem.default_tools_approval_mode': 'approve',
      developer_instructions: launch.instructions,
    });
    expect(args.join(' ')).not.toContain('secret-token');
  });

  it('given no model, then no model flag', () => {
    expect(codexBrain.setup({ ...launch, model: null }).args).not.toContain('-m');
  });
});

describe('geminiBrain', () => {
  it('given a launch, then a trusted server with the credential as a reference, GEMINI.md with the instructions, and a trusted directory', () => {
    const { args, env, files } = geminiBrain.setup(launch);
    expect(args).toEqual(['-m', 'm1']);
    expect(env).toEqual({ GEMINI_CLI_TRUST_WORKSPACE: 'true' });
    const settings = JSON.parse(files.find((f) => f.path === '.gemini/settings.json')!.content);
    expect(settings).toEqual({ mcpServers: { brainstem: { httpUrl: launch.mcp_url, headers: { Authorization: 'Bearer ${BRAINSTEM_TOKEN}' }, trust: true } } });
    expect(files.find((f) => f.path === 'GEMINI.md')!.content).toBe(launch.instructions);
  });
});

describe('opencodeBrain', () => {
  it("given a launch, then the server with the credential as a reference, and the brain's own agent carrying the instructions, run by --agent", () => {
    const { args, files } = opencodeBrain.setup(launch);
    expect(args).toEqual(['--agent', OPENCODE_BRAIN_AGENT, '-m', 'm1']);
    const config = JSON.parse(files.find((f) => f.path === 'opencode.json')!.content);
    expect(config.mcp).toEqual({ brainstem: { type: 'remote', url: launch.mcp_url, headers: { Authorization: 'Bearer {env:BRAINSTEM_TOKEN}' }, enabled: true } });
    const agent = files.find((f) => f.path === `.opencode/agent/${OPENCODE_BRAIN_AGENT}.md`)!.content;
    expect(agent).toMatch(/^---\ndescription: Brainstem main brain\nmode: primary\n---\n/);
    expect(agent).toContain(launch.instructions);
  });
});
