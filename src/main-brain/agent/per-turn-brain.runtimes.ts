import { stringify } from 'smol-toml';
import { RESERVED_MCP_SERVER, TOKEN_ENV, brainstemHeaders, json, markdown } from '../../profiles/emitters/emitter-support';
import { codexProtocol } from '../../sessions/runtimes/codex.runtime';
import { geminiProtocol } from '../../sessions/runtimes/gemini-cli.runtime';
import { opencodeProtocol } from '../../sessions/runtimes/opencode.runtime';
import { TurnProtocol } from '../../sessions/runtimes/turn-conversation';
import { BrainLaunch } from './brain-agent.port';

/** A file the runtime reads from the brain's directory, by its path there. */
export interface BrainFile {
  path: string;
  content: string;
}

/** Flags added to every turn, variables added to its environment, files written in the brain's directory. */
export interface BrainSetup {
  args: string[];
  env: Record<string, string>;
  files: BrainFile[];
}

/**
 * A per-turn runtime hosting the main brain: its protocol (shared with the workers that run it), and how the brain's
 * launch reaches it (Brainstem's MCP server with the brain's credential, the standing instructions, the model). Pure.
 */
export interface PerTurnBrainRuntime {
  readonly protocol: TurnProtocol;
  setup(launch: BrainLaunch): BrainSetup;
}

/** The brain's credential header, as a reference to its environment in the runtime's syntax, never the value. */
function authorization(ref: (envVar: string) => string): { Authorization: string } {
  return { Authorization: brainstemHeaders(ref).Authorization };
}

/** A TOML value for a `-c key=value` override (codex parses the value as TOML). */
function toml(value: string): string {
  return stringify({ v: value }).slice('v = '.length).trim();
}

const modelFlag = (launch: BrainLaunch) => (launch.model ? ['-m', launch.model] : []);

/**
 * codex: everything by `-c` overrides, nothing written. The brain's directory is no git repository, and a headless
 * `codex exec` refuses an MCP call that would need approval, as every one does by default: the brain's server is
 * approved. The instructions are developer instructions, given to every turn. The brain is not in Brainstem's
 * sandbox, so it keeps codex's own (read-only by default) for its commands (docs/reference/runtimes.md).
 */
export const codexBrain: PerTurnBrainRuntime = {
  protocol: codexProtocol,
  setup: (launch) => {
    const server = `mcp_servers.${RESERVED_MCP_SERVER}`;
    const overrides = [
      `${server}.url=${toml(launch.mcp_url)}`,
      `${server}.bearer_token_env_var=${toml(TOKEN_ENV)}`,
      `${server}.default_tools_approval_mode="approve"`,
      `developer_instructions=${toml(launch.instructions)}`,
    ];
    return { args: ['--skip-git-repo-check', ...overrides.flatMap((o) => ['-c', o]), ...modelFlag(launch)], env: {}, files: [] };
  },
};

/**
 * gemini-cli: the server in `.gemini/settings.json` (trusted, so headless gemini offers its tools), the instructions
 * as GEMINI.md, which gemini adds to the context of every turn. gemini 0.61 reads a directory's settings only when
 * it trusts it: GEMINI_CLI_TRUST_WORKSPACE does (`--skip-trust` does not: its MCP server is then never reached).
 */
export const geminiBrain: PerTurnBrainRuntime = {
  protocol: geminiProtocol,
  setup: (launch) => ({
    args: modelFlag(launch),
    env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    files: [
      { path: '.gemini/settings.json', content: json({ mcpServers: { [RESERVED_MCP_SERVER]: { httpUrl: launch.mcp_url, headers: authorization((v) => `\${${v}}`), trust: true } } }) },
      { path: 'GEMINI.md', content: launch.instructions },
    ],
  }),
};

/** The opencode agent the brain runs as. */
export const OPENCODE_BRAIN_AGENT = 'brainstem-brain';

/**
 * opencode: the server in `opencode.json`, the instructions as the prompt of an agent of the brain's own
 * (`.opencode/agent/brainstem-brain.md`, run by `--agent`), as the profile emitter gives a worker its profile.
 */
export const opencodeBrain: PerTurnBrainRuntime = {
  protocol: opencodeProtocol,
  setup: (launch) => ({
    args: ['--agent', OPENCODE_BRAIN_AGENT, ...modelFlag(launch)],
    env: {},
    files: [
      {
        path: 'opencode.json',
        content: json({
          $schema: 'https://opencode.ai/config.json',
          mcp: { [RESERVED_MCP_SERVER]: { type: 'remote', url: launch.mcp_url, headers: authorization((v) => `{env:${v}}`), enabled: true } },
        }),
      },
      { path: `.opencode/agent/${OPENCODE_BRAIN_AGENT}.md`, content: markdown({ description: 'Brainstem main brain', mode: 'primary' }, launch.instructions) },
    ],
  }),
};
