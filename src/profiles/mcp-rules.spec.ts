import { GEMINI_MCP_NAMING, mcpRuleName, mcpRuleTarget } from './mcp-rules';

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

  it("given gemini-cli's naming, then mcp_<server>_<tool> and mcp_<server>_* read the same way, and a bare server is no rule", () => {
    expect(mcpRuleTarget('mcp_github_enterprise_search', servers, GEMINI_MCP_NAMING)).toEqual({ server: 'github_enterprise', tool: 'search' });
    expect(mcpRuleTarget('mcp_docs_*', servers, GEMINI_MCP_NAMING)).toEqual({ server: 'docs', tool: null });
    expect(mcpRuleTarget('mcp_docs', servers, GEMINI_MCP_NAMING)).toBeNull();
    expect(mcpRuleTarget('mcp__docs__x', servers, GEMINI_MCP_NAMING)).toBeNull();
  });

  it('given a target, then mcpRuleName writes it back in either naming', () => {
    expect(mcpRuleName({ server: 'docs', tool: 'search' })).toBe('mcp__docs__search');
    expect(mcpRuleName({ server: 'docs', tool: null })).toBe('mcp__docs');
    expect(mcpRuleName({ server: 'docs', tool: 'search' }, GEMINI_MCP_NAMING)).toBe('mcp_docs_search');
    expect(mcpRuleName({ server: 'docs', tool: null }, GEMINI_MCP_NAMING)).toBe('mcp_docs_*');
  });
});
