import { EmittedFile, claudeFallbackModel, claudeModel, claudeSystemPrompt, denyRules } from '../../profiles/emitters';
import { ProfileDoc } from '../../profiles/profile.schema';

export const SETTINGS_FILE = '.claude/settings.json';
export const MCP_FILE = '.mcp.json';
const SKILLS_DIR = '.claude/skills/';

export interface SessionConfig {
  /** Files to write under the session's config directory (relative, `/`-separated). */
  files: Array<{ path: string; content: string }>;
  /** Flags for the runtime (`claude`: pointing at those files; only the flags that have values). */
  args: string[];
  /** Environment the runtime's processes get (opencode: where its config file is). */
  env?: Record<string, string>;
}

/**
 * How a profile reaches a claude-code session without touching the user's repo: the emitter's files go to
 * a per-session directory and `claude` is pointed at them by flags. Pure.
 *
 * The emitted settings name the profile's agent (`agent`), which claude would look up in the repo's or the
 * user's `.claude/agents/` — not in the session directory. The agent's content travels by flags instead
 * (system prompt, model, mode, tools), so the session's copy of the settings drops `agent`.
 */
export function claudeSessionConfig(profile: ProfileDoc, emitted: readonly EmittedFile[], configDir: string, sandboxed = false): SessionConfig {
  const files = emitted.map((f) => (f.path === SETTINGS_FILE ? { path: f.path, content: sessionSettings(f.content, sandboxed) } : { path: f.path, content: f.content }));
  // Inside Brainstem's sandbox claude's own cannot nest (bubblewrap in bubblewrap): it is turned off, over the user's settings too.
  if (sandboxed && !files.some((f) => f.path === SETTINGS_FILE)) files.push({ path: SETTINGS_FILE, content: sessionSettings('{}', true) });
  const args: string[] = [];
  // Variadic flags first: each is followed by another flag, so none swallows what comes after it.
  const builtin = profile.tools.builtin ?? [];
  if (builtin.length) args.push('--allowedTools', ...builtin);
  const deny = denyRules(profile);
  if (deny.length) args.push('--disallowedTools', ...deny);
  // Claude Code (2.1.32+) loads `.claude/skills/` of an --add-dir directory; it is added only to carry skills.
  if (files.some((f) => f.path.startsWith(SKILLS_DIR))) args.push('--add-dir', configDir);
  if (files.some((f) => f.path === MCP_FILE)) args.push('--mcp-config', `${configDir}/${MCP_FILE}`);
  if (files.some((f) => f.path === SETTINGS_FILE)) args.push('--settings', `${configDir}/${SETTINGS_FILE}`);
  const model = claudeModel(profile);
  if (model) args.push('--model', model);
  const fallback = claudeFallbackModel(profile);
  if (fallback) args.push('--fallback-model', fallback);
  args.push('--permission-mode', profile.permissions.mode);
  const prompt = claudeSystemPrompt(profile);
  if (prompt) args.push('--append-system-prompt', prompt);
  return { files, args };
}

function sessionSettings(content: string, sandboxed: boolean): string {
  const settings = JSON.parse(content) as Record<string, unknown>;
  delete settings.agent;
  if (sandboxed) settings.sandbox = { ...(settings.sandbox as Record<string, unknown> | undefined), enabled: false };
  return `${JSON.stringify(settings, null, 2)}\n`;
}
