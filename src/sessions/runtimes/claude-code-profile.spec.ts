import { emitProfile } from '../../profiles/emitters';
import { normalizeDocument } from '../../profiles/profile.schema';
import { claudeSessionConfig } from './claude-code-profile';

const ctx = { profileId: 'bare', serviceUrl: 'http://127.0.0.1:1', skills: [] };

describe('claudeSessionConfig', () => {
  it('passes only the flags that have values', () => {
    const doc = normalizeDocument({ name: 'Bare' });
    const { args, files } = claudeSessionConfig(doc, emitProfile('claude-code', doc, ctx).files, '/j/session-config/cs_1');
    expect(args).toEqual(['--mcp-config', '/j/session-config/cs_1/.mcp.json', '--settings', '/j/session-config/cs_1/.claude/settings.json', '--permission-mode', 'acceptEdits']);
    expect(files.map((f) => f.path)).toEqual(['.claude/settings.json', '.claude/agents/bare.md', '.mcp.json']);
  });

  it("drops the settings' agent (its content goes by flags) and keeps the rest as emitted", () => {
    const doc = normalizeDocument({ name: 'Bare', permissions: { mode: 'plan', allow: ['Read'], deny: [], ask: [] } });
    const emitted = emitProfile('claude-code', doc, ctx).files;
    const settings = claudeSessionConfig(doc, emitted, '/d').files.find((f) => f.path === '.claude/settings.json');
    expect(JSON.parse(emitted[0].content)).toMatchObject({ agent: 'bare' });
    expect(JSON.parse(settings?.content ?? '')).toEqual({ permissions: { defaultMode: 'plan', allow: ['Read', 'mcp__brainstem'] } });
  });

  it('adds the session directory with --add-dir only when it carries skills', () => {
    const doc = normalizeDocument({ name: 'Bare', skills: [{ name: 'lint', source: 'local' }] });
    const skills = [{ name: 'lint', files: [{ path: 'SKILL.md', content: '---\nname: lint\n---\n' }] }];
    const { args, files } = claudeSessionConfig(doc, emitProfile('claude-code', doc, { ...ctx, skills }).files, '/d');
    expect(files.map((f) => f.path)).toContain('.claude/skills/lint/SKILL.md');
    expect(args.slice(0, 4)).toEqual(['--add-dir', '/d', '--mcp-config', '/d/.mcp.json']);
  });

  it('uses the first fallback as the model when no model is set, without --fallback-model', () => {
    const doc = normalizeDocument({ name: 'Bare', model: { fallback: ['m1', 'm2'] } });
    const { args } = claudeSessionConfig(doc, emitProfile('claude-code', doc, ctx).files, '/d');
    expect(args).toEqual(expect.arrayContaining(['--model', 'm1']));
    expect(args).not.toContain('--fallback-model');
  });

  it("given a sandboxed session, then claude's own sandbox is turned off in its settings (it cannot nest in Brainstem's), the profile's keys kept", () => {
    const doc = normalizeDocument({ name: 'Bare', sandbox: { network: { allow: ['registry.npmjs.org'] } } });
    const emitted = emitProfile('claude-code', doc, ctx).files;
    const settings = (sandboxed: boolean) => JSON.parse(claudeSessionConfig(doc, emitted, '/d', sandboxed).files.find((f) => f.path === '.claude/settings.json')?.content ?? '{}');
    expect(settings(false).sandbox).toMatchObject({ enabled: true });
    expect(settings(true).sandbox).toMatchObject({ enabled: false, network: { allowedDomains: ['registry.npmjs.org'] } });
  });
});
