import { mcpRuleTarget } from './mcp-rules';

describe('mcpRuleTarget', () => {
  const servers = ['github', 'github_enterprise', 'docs'];

  it('given a tool rule, then it names the server and the tool', () => {
    expect(mcpRuleTarget('mcp__github__create_issue', servers)).toEqual({ server: 'github', tool: 'create_issue' });
  });

  it('given a whole-server rule, with or without the wildcard, then it names the server and no tool', () => {
    expect(mcpRuleTarget('mcp__docs', servers)).toEqual({ server: 'docs', tool: null });
    expect(mcpRuleTarget('mcp__docs__*', servers)).toEqual({ server: 'docs', tool: null });
  });

  it('given server names where one begins another, then the longest that fits wins', () => {
    expect(mcpRuleTarget('mcp__github_enterprise__search', servers)).toEqual({ server: 'github_enterprise', tool: 'search' });
    expect(mcpRuleTarget('mcp__github_enterprise', servers)).toEqual({ server: 'github_enterprise', tool: null });
  });

  it('given a rule that is not an MCP rule, names another server, or wildcards part of a tool name, then null', () => {
    for (const rule of ['Bash(git log *)', 'Read', 'mcp__slack__post', 'mcp__github__create_*', 'mcp__github__', 'mcp__docsx']) {
      expect(mcpRuleTarget(rule, servers)).toBeNull();
    }
  });
});
