import { load } from 'js-yaml';
import { emitProfile } from '../../profiles/emitters';
import { normalizeDocument } from '../../profiles/profile.schema';
import { OPENCODE_CONFIG_FILE, opencodeSessionConfig } from './opencode-profile';

const ctx = { profileId: 'careful', serviceUrl: 'http://127.0.0.1:1', skills: [] };

describe('opencodeSessionConfig', () => {
  it('given a profile, then the emitted opencode.json carries the agent the agent file would, with its body as the prompt', () => {
    // Given a profile with a model, instructions and rules
    const doc = normalizeDocument({
      name: 'Careful',
      model: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      instructions: { system_prompt: 'Be careful.', files: ['docs/STYLE.md'] },
      permissions: { mode: 'acceptEdits', allow: [], deny: ['Bash(rm *)'], ask: [] },
    });
    const emitted = emitProfile('opencode', doc, ctx).files;
    // When mapped for a session
    const config = opencodeSessionConfig(doc, 'careful', emitted, '/j/session-config/cs_1');
    // Then one config file, selected by --agent and named by OPENCODE_CONFIG
    expect(config.args).toEqual(['--agent', 'careful']);
    expect(config.env).toEqual({ OPENCODE_CONFIG: '/j/session-config/cs_1/opencode.json' });
    expect(config.files.map((f) => f.path)).toEqual([OPENCODE_CONFIG_FILE]);
    const written = JSON.parse(config.files[0].content) as Record<string, unknown> & { agent: Record<string, Record<string, unknown>> };
    const { agent, ...rest } = written;
    expect(rest).toEqual(JSON.parse(emitted.find((f) => f.path === OPENCODE_CONFIG_FILE)!.content));
    const agentFile = emitted.find((f) => f.path === '.opencode/agent/careful.md')!.content;
    const [, frontmatter, body] = /^---\n([\s\S]*?)---\n([\s\S]*)$/.exec(agentFile)!;
    expect(agent).toEqual({ careful: { ...(load(frontmatter) as object), prompt: body.trimEnd() } });
  });

  it('given a profile without instructions or a model, then the agent has no prompt and no model', () => {
    const doc = normalizeDocument({ name: 'Bare' });
    const config = opencodeSessionConfig(doc, 'bare', emitProfile('opencode', doc, { ...ctx, profileId: 'bare' }).files, '/d');
    const agent = (JSON.parse(config.files[0].content) as { agent: { bare: Record<string, unknown> } }).agent.bare;
    expect(Object.keys(agent).sort()).toEqual(['description', 'mode', 'permission']);
  });
});
