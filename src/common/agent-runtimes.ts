/**
 * Agent runtimes in the order `auto` prefers them, with the executable that reveals each. Shared by the sessions
 * (which run them), the profiles (which configure them) and the main brain (which may be hosted by one).
 */
export const AGENT_RUNTIMES: readonly { name: string; executable: string }[] = [
  { name: 'claude-code', executable: 'claude' },
  { name: 'codex', executable: 'codex' },
  { name: 'gemini-cli', executable: 'gemini' },
  { name: 'opencode', executable: 'opencode' },
];
