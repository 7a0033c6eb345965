import { SandboxFacts, sandboxPolicy, urlHost } from './sandbox-policy';

const facts = (over: Partial<SandboxFacts> = {}): SandboxFacts => ({
  session_id: 'cs_1',
  runtime: 'command',
  cwd: '/src/app',
  home: '/home/dev',
  service_home: '/home/dev',
  env: {},
  data_dir: '/home/dev/.brainstem',
  profiles_dir: '/home/dev/.brainstem/profiles',
  worktrees_dir: '/home/dev/.brainstem/worktrees',
  session_config_dir: '/home/dev/.brainstem/session-config/cs_1',
  service_url: 'http://127.0.0.1:4820',
  tmp_root: '/tmp',
  git_common_dir: null,
  data_dir_entries: [],
  profile: null,
  config_urls: [],
  ...over,
});

describe('sandboxPolicy', () => {
  it('given a command worker, then it writes its cwd and temp dir only, never the data or profiles directory, and the credentials and data directory are hidden', () => {
    const p = sandboxPolicy(facts());
    expect(p.allow_write).toEqual(['/src/app', '/tmp/brainstem-sandbox/cs_1']);
    expect(p.deny_write).toEqual(['/home/dev/.brainstem', '/home/dev/.brainstem/profiles']);
    expect(p.deny_read).toEqual(expect.arrayContaining(['/home/dev/.ssh', '/home/dev/.aws', '/home/dev/.gnupg', '/home/dev/.config/gh', '/home/dev/.netrc', '/home/dev/.docker', '/home/dev/.brainstem']));
    expect(p.allow_read).toEqual(['/home/dev/.brainstem/session-config/cs_1']);
    expect(p.network).toEqual({ allow: ['127.0.0.1:4820'], deny: [] });
    expect(p.loopback_ports).toEqual([4820]);
    expect(p.tmp_dir).toBe('/tmp/brainstem-sandbox/cs_1');
  });

  it("given a claude worker with a base URL on loopback, then it writes claude's state, never claude's settings, reaches its model API and the loopback one is forwarded", () => {
    const p = sandboxPolicy(facts({ runtime: 'claude-code', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9100/v1' } }));
    expect(p.allow_write).toEqual(expect.arrayContaining(['/home/dev/.claude', '/home/dev/.claude.json']));
    expect(p.deny_write).toEqual(expect.arrayContaining(['/home/dev/.claude/settings.json', '/src/app/.claude/settings.json', '/src/app/.claude/settings.local.json']));
    expect(p.make_dirs).toEqual(expect.arrayContaining(['/home/dev/.claude']));
    expect(p.network.allow).toEqual(expect.arrayContaining(['*.anthropic.com', '127.0.0.1:9100']));
    expect(p.loopback_ports).toEqual([4820, 9100]);
  });

  it("given a worktree inside the data directory, then it writes the worktree and the repository's git directory but not its hooks or config, and every other entry of the data directory is denied", () => {
    const cwd = '/home/dev/.brainstem/worktrees/app/w3';
    const p = sandboxPolicy(facts({ cwd, git_common_dir: '/src/app/.git', data_dir_entries: ['api-token', 'journal', 'worktrees', 'profiles'] }));
    expect(p.allow_write).toEqual(expect.arrayContaining([cwd, '/src/app/.git']));
    expect(p.deny_write).toEqual(expect.arrayContaining(['/home/dev/.brainstem/api-token', '/home/dev/.brainstem/journal', '/src/app/.git/hooks', '/src/app/.git/config']));
    expect(p.deny_write).not.toContain('/home/dev/.brainstem/worktrees');
    expect(p.deny_write).not.toContain('/home/dev/.brainstem');
    // Hidden with the data directory, read back for itself alone.
    expect(p.allow_read).toContain(cwd);
  });

  it("given a profile's sandbox section, then its paths are resolved from home and the cwd, and its hosts are added, deny apart", () => {
    const p = sandboxPolicy(
      facts({ profile: { allow_write: ['~/.cache/pip', 'build'], deny_read: ['~/secrets', '/etc/company'], network: { allow: ['registry.npmjs.org', 'localhost:5432'], deny: ['evil.example'] } } }),
    );
    expect(p.allow_write).toEqual(expect.arrayContaining(['/home/dev/.cache/pip', '/src/app/build']));
    expect(p.deny_read).toEqual(expect.arrayContaining(['/home/dev/secrets', '/etc/company']));
    expect(p.network).toEqual({ allow: ['127.0.0.1:4820', 'registry.npmjs.org', 'localhost:5432'], deny: ['evil.example'] });
    expect(p.loopback_ports).toEqual([4820, 5432]);
  });

  it("given an opencode worker with XDG folders, and a HOME of its own, then its state is written where they say, and the user's credentials stay hidden in both homes", () => {
    const p = sandboxPolicy(facts({ runtime: 'opencode', home: '/w/home', env: { XDG_DATA_HOME: '/w/xdg/data', HOME: '/w/home' } }));
    expect(p.allow_write).toEqual(expect.arrayContaining(['/w/xdg/data/opencode', '/w/home/.local/state/opencode', '/w/home/.config/opencode']));
    expect(p.make_dirs).toEqual(expect.arrayContaining(['/w/xdg/data/opencode']));
    expect(p.deny_read).toEqual(expect.arrayContaining(['/w/home/.ssh', '/home/dev/.ssh']));
  });

  it("given a codex worker whose configuration names its provider's URL, then that host is allowed", () => {
    const p = sandboxPolicy(facts({ runtime: 'codex', config_urls: ['http://127.0.0.1:9200/v1'] }));
    expect(p.network.allow).toEqual(expect.arrayContaining(['*.openai.com', '127.0.0.1:9200']));
    expect(p.loopback_ports).toEqual([4820, 9200]);
  });

  it('given a service URL off loopback, then it is allowed through the proxy and nothing is forwarded', () => {
    const p = sandboxPolicy(facts({ service_url: 'http://10.0.0.2:4820' }));
    expect(p.network.allow).toEqual(['10.0.0.2:4820']);
    expect(p.loopback_ports).toEqual([]);
  });
});

describe('urlHost', () => {
  it('given http(s) URLs, then host:port with the default ports; anything else, null', () => {
    expect(urlHost('https://api.example.com/v1')).toEqual({ entry: 'api.example.com:443', host: 'api.example.com', port: 443 });
    expect(urlHost('http://[::1]:8080')).toEqual({ entry: '[::1]:8080', host: '[::1]', port: 8080 });
    expect(urlHost('ftp://x')).toBeNull();
    expect(urlHost('not a url')).toBeNull();
  });
});
