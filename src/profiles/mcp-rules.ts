/** What a permission rule names on one of the profile's MCP servers: one tool, or every tool (`tool: null`). */
export interface McpRuleTarget {
  server: string;
  tool: string | null;
}

/**
 * How a runtime names an MCP tool: Claude Code's rules (and so a profile's) `mcp__<server>__<tool>`, a whole
 * server `mcp__<server>__*` or `mcp__<server>`; gemini-cli's `mcp_<server>_<tool>`, a whole server `mcp_<server>_*`;
 * opencode's `<server>_<tool>`, `<server>_*`.
 */
export interface McpNaming {
  prefix: string;
  separator: string;
  /** Whether the bare server name also means all its tools. */
  bareServer: boolean;
}

export const CLAUDE_MCP_NAMING: McpNaming = { prefix: 'mcp__', separator: '__', bareServer: true };
export const GEMINI_MCP_NAMING: McpNaming = { prefix: 'mcp_', separator: '_', bareServer: false };
/** opencode names an MCP tool `<server>_<tool>`, and its permission keys are globs over those names. */
export const OPENCODE_MCP_NAMING: McpNaming = { prefix: '', separator: '_', bareServer: false };

/**
 * Reads an MCP tool name or rule against the profile's server names (a name may itself hold `_`, so the longest
 * one that fits wins). null for any other rule, a wildcard inside a tool name, or a server the profile does not have.
 */
export function mcpRuleTarget(rule: string, servers: readonly string[], naming: McpNaming = CLAUDE_MCP_NAMING): McpRuleTarget | null {
  if (!rule.startsWith(naming.prefix)) return null;
  const rest = rule.slice(naming.prefix.length);
  let best: McpRuleTarget | null = null;
  for (const server of servers) {
    if (best && best.server.length >= server.length) continue;
    if ((naming.bareServer && rest === server) || rest === `${server}${naming.separator}*`) best = { server, tool: null };
    else if (rest.startsWith(`${server}${naming.separator}`)) {
      const tool = rest.slice(server.length + naming.separator.length);
      if (tool !== '' && !/[*?]/.test(tool)) best = { server, tool };
    }
  }
  return best;
}

/** The inverse: the name of a tool, or of a whole server (the bare server where the naming allows it). */
export function mcpRuleName({ server, tool }: McpRuleTarget, naming: McpNaming = CLAUDE_MCP_NAMING): string {
  if (tool !== null) return `${naming.prefix}${server}${naming.separator}${tool}`;
  return naming.bareServer ? `${naming.prefix}${server}` : `${naming.prefix}${server}${naming.separator}*`;
}
