import { EmittedFile, opencodeAgent } from '../../profiles/emitters';
import { instructionsMarkdown, json } from '../../profiles/emitters/emitter-support';
import { ProfileDoc } from '../../profiles/profile.schema';
import { SessionConfig } from './claude-code-profile';

export const OPENCODE_CONFIG_FILE = 'opencode.json';

/**
 * How a profile reaches an opencode session without touching the user's repo: the emitted `opencode.json`, with
 * the profile's agent defined in it (its prompt is the instructions the emitter would put in the agent file), goes
 * to the session's config directory; opencode reads it through OPENCODE_CONFIG, and `--agent <id>` selects the
 * agent whatever `default_agent` the repo's own config sets. Pure.
 *
 * A file rather than OPENCODE_CONFIG_CONTENT: opencode substitutes `{env:VAR}` references (the profile's MCP
 * headers and env) in config files in every version, in the inline content only in recent ones.
 */
export function opencodeSessionConfig(profile: ProfileDoc, profileId: string, emitted: readonly EmittedFile[], configDir: string): SessionConfig {
  const file = emitted.find((f) => f.path === OPENCODE_CONFIG_FILE);
  const config = (file ? JSON.parse(file.content) : {}) as Record<string, unknown>;
  const prompt = instructionsMarkdown(profile);
  config.agent = { [profileId]: { ...opencodeAgent(profile), ...(prompt ? { prompt } : {}) } };
  return {
    files: [{ path: OPENCODE_CONFIG_FILE, content: json(config) }],
    args: ['--agent', profileId],
    env: { OPENCODE_CONFIG: `${configDir}/${OPENCODE_CONFIG_FILE}` },
  };
}
