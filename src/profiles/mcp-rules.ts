/** What a permission rule names on one of the profile's MCP servers: one tool, or every tool (`tool: null`). */
export interface McpRuleTarget {
  server: string;
  tool: string | null;
}

/**
 * Reads a permission rule in Claude Code's MCP form, `mcp__<server>__<tool>`, `mcp__<server>__*` or
 * `mcp__<server>`, against the profile's server names (a name may itself hold `_`, so the longest one that
 * fits wins). null for any other rule, a wildcard inside a tool name, or a server the profile does not have.
 */
export function mcpRuleTarget(rule: string, servers: readonly string[]): McpRuleTarget | null {
  if (!rule.startsWith('mcp__')) return null;
  const rest = rule.slice('mcp__'.length);
  let best: McpRuleTarget | null = null;
  for (const server of servers) {
    if (best && best.server.length >= server.length) continue;
    if (rest === server || rest === `${server}__*`) best = { server, tool: null };
    else if (rest.startsWith(`${server}__`)) {
      const tool = rest.slice(server.length + 2);
      if (tool !== '' && !/[*?]/.test(tool)) best = { server, tool };
    }
  }
  return best;
}
