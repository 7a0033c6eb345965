/**
 * The environment of a real claude worker on a fake model API at `baseUrl`: found first on PATH from `bin`, its state in
 * `home`, no traffic but the model's, and time for its MCP servers to start on a loaded machine (the stdio bridge runs
 * TypeScript through swc when dist/ holds no build).
 */
export function fakeModelClaudeEnv(baseUrl: string, home: string, bin: string): Record<string, string> {
  return {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: home,
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-fake',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    MCP_TIMEOUT: '60000',
  };
}
