import { EmittedFile } from '../emitters';
import { mergeFile, nextManifest, planFiles, sha256 } from './apply-plan';

const settings: EmittedFile = { path: '.claude/settings.json', content: '{"permissions":{"defaultMode":"plan"}}', merge: 'json' };

describe('apply plan', () => {
  it('merges JSON: the profile sets its keys, the user keeps theirs, arrays are replaced', () => {
    // Given a user file with foreign keys; When merged; Then both are present
    const merged = JSON.parse(mergeFile(settings, '{"env":{"A":"1"},"permissions":{"defaultMode":"default","allow":["Read"]}}', 'p'));
    expect(merged).toEqual({ env: { A: '1' }, permissions: { defaultMode: 'plan', allow: ['Read'] } });
  });

  it('keeps the user formatting when the merge changes no value', () => {
    const current = '{ "permissions": { "defaultMode": "plan" } }';
    expect(mergeFile(settings, current, 'p')).toBe(current);
  });

  it('refuses to merge into a file that does not parse, naming it', () => {
    expect(() => mergeFile(settings, '{ not json', 'p')).toThrow(/\.claude\/settings\.json exists but does not parse/);
  });

  it('replaces its own marked block and appends one when absent', () => {
    const block: EmittedFile = { path: 'AGENTS.md', content: '<!-- brainstem:profile p begin -->\nnew\n<!-- brainstem:profile p end -->\n', merge: 'block' };
    expect(mergeFile(block, '# Mine\n', 'p')).toBe(`# Mine\n\n${block.content}`);
    expect(mergeFile(block, `top\n<!-- brainstem:profile p begin -->\nold\n<!-- brainstem:profile p end -->\nbottom\n`, 'p')).toBe(`top\n${block.content}bottom\n`);
  });

  it('classifies files: create, unchanged, update, and drift when the file changed since the manifest', () => {
    // Given a manifest from a previous apply
    const owned = (path: string, content: string): EmittedFile => ({ path, content, merge: 'owned' });
    const emitted = [owned('a', 'A2'), owned('b', 'B'), owned('c', 'C2'), owned('d', 'D2')];
    const manifest = { profile_id: 'p', runtime: 'claude-code', files: { b: sha256('B'), c: sha256('C1'), d: sha256('D1') } };
    const existing = new Map<string, string | null>([['a', null], ['b', 'B'], ['c', 'C1'], ['d', 'D-edited']]);
    // When planned; Then
    expect(planFiles(emitted, existing, manifest, 'p').map((f) => f.action)).toEqual(['create', 'unchanged', 'update', 'drift']);
    expect(nextManifest('p', 'claude-code', planFiles(emitted, existing, null, 'p')).files.d).toBe(sha256('D2'));
  });
});
