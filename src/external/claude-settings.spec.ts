import { DomainError } from '../common/domain-error';
import { brainstemHooks, shellWord, withBrainstemHooks, withoutBrainstemHooks } from './claude-settings';

const PATH = '/home/u/.claude/settings.json';
const hooks = brainstemHooks((e) => `node /opt/brainstem/bin/brainstem.js hook ${e} --url http://127.0.0.1:4820`, { stop_wait_s: 180, permission_wait_s: 60 });
const moved = brainstemHooks((e) => `node /opt/brainstem/bin/brainstem.js hook ${e} --url http://127.0.0.1:4999`, { stop_wait_s: 180, permission_wait_s: 60 });

const own = { hooks: [{ type: 'command', command: './lint.sh' }] };

describe("Brainstem's hooks in claude's settings", () => {
  it('Given no settings, When the hooks are merged in, Then each event runs brainstem hook, the waiting ones long enough for their wait', () => {
    const merged = JSON.parse(withBrainstemHooks(PATH, null, hooks, null));
    expect(Object.keys(merged.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'Notification', 'Stop', 'SessionEnd']);
    expect(merged.hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: expect.stringContaining('hook Stop'), timeout: 210 }] }]);
    expect(merged.hooks.PermissionRequest[0].hooks[0].timeout).toBe(90);
    expect(merged.hooks.SessionStart[0].hooks[0].timeout).toBe(10);
  });

  it("Given the user's own hooks and settings, When Brainstem's are merged in, Then theirs are untouched and Brainstem's come after them, in the file's indentation", () => {
    const text = '{\n\t"model": "opus",\n\t"hooks": {\n\t\t"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "./lint.sh"}]}],\n\t\t"PostToolUse": []\n\t}\n}';
    const merged = withBrainstemHooks(PATH, text, hooks, null);
    const parsed = JSON.parse(merged);
    expect(parsed.model).toBe('opus');
    expect(parsed.hooks.Stop).toEqual([{ matcher: '', hooks: [{ type: 'command', command: './lint.sh' }] }, hooks.Stop]);
    expect(parsed.hooks.PostToolUse).toEqual([]);
    expect(merged.split('\n')[1]).toBe('\t"model": "opus",');
    // No final newline before: none after.
    expect(merged.endsWith('}')).toBe(true);
  });

  it('Given an earlier install, When installing again (another URL), Then its groups are replaced, not doubled', () => {
    const first = withBrainstemHooks(PATH, JSON.stringify({ hooks: { Stop: [own] } }), hooks, null);
    const again = JSON.parse(withBrainstemHooks(PATH, first, moved, hooks));
    expect(again.hooks.Stop).toEqual([own, moved.Stop]);
  });

  it("Given a file with Brainstem's hooks and the user's, When they are taken out, Then only the user's are left, and the lists Brainstem alone filled go", () => {
    const merged = withBrainstemHooks(PATH, JSON.stringify({ a: 1, hooks: { Stop: [own] }, z: 2 }, null, 2), hooks, null);
    const left = withoutBrainstemHooks(PATH, merged, hooks);
    expect(JSON.parse(left ?? '')).toEqual({ a: 1, hooks: { Stop: [own] }, z: 2 });
    expect(Object.keys(JSON.parse(left ?? ''))).toEqual(['a', 'hooks', 'z']);
    expect(JSON.parse(withoutBrainstemHooks(PATH, withBrainstemHooks(PATH, '{"a":1}', hooks, null), hooks) ?? '')).toEqual({ a: 1 });
  });

  it('Given a group of Brainstem the user edited, When the hooks are taken out, Then it is theirs now and stays; a file without any of them is left as it is (null)', () => {
    const merged = JSON.parse(withBrainstemHooks(PATH, null, hooks, null));
    merged.hooks.Stop[0].hooks[0].timeout = 999;
    const left = JSON.parse(withoutBrainstemHooks(PATH, JSON.stringify(merged), hooks) ?? '');
    expect(left.hooks).toEqual({ Stop: [merged.hooks.Stop[0]] });
    expect(withoutBrainstemHooks(PATH, JSON.stringify({ hooks: { Stop: [own] } }), hooks)).toBeNull();
  });

  it.each<[string, string]>([
    ['not JSON', '{"model": '],
    ['not an object', '[1, 2]'],
    ['hooks not an object', '{"hooks": []}'],
    ['an event not a list', '{"hooks": {"Stop": {"hooks": []}}}'],
  ])('Given settings %s, When the hooks are merged in, Then nothing is made of them: claude_settings_malformed', (_what, text) => {
    expect(() => withBrainstemHooks(PATH, text, hooks, null)).toThrow(expect.objectContaining({ code: 'claude_settings_malformed' }) as DomainError);
  });

  it('Given paths and URLs, When written as shell words, Then plain ones stay and others are quoted so sh reads them as one word', () => {
    expect(shellWord('/usr/bin/node')).toBe('/usr/bin/node');
    expect(shellWord('http://127.0.0.1:4820')).toBe('http://127.0.0.1:4820');
    expect(shellWord("/home/o'neil/my dir")).toBe(`'/home/o'\\''neil/my dir'`);
    expect(shellWord('$(rm -rf ~)')).toBe("'$(rm -rf ~)'");
  });
});
