import { DomainError } from '../common/domain-error';
import { profileSandbox, sandboxLoosened, withNetworkAllow } from './profile-sandbox';
import { SANDBOX_LIST_MAX, networkEntryProblem, sandboxPathProblem } from './profile-sandbox.schema';
import { normalizeDocument, parseProfileDocument } from './profile.schema';
import { parseProfileYaml } from './profile.yaml';

const parse = (text: string) => {
  const yaml = parseProfileYaml(text);
  if (!yaml.ok) throw new Error(yaml.error);
  return parseProfileDocument(yaml.value);
};

describe('profileSandbox', () => {
  it('given a profile without a sandbox section, then every field has its default: empty lists, Bash auto-allowed', () => {
    expect(profileSandbox(normalizeDocument({ name: 'P' }))).toEqual({ allow_write: [], deny_read: [], network: { allow: [], deny: [] }, auto_allow_bash: true });
  });

  it('given a partial section, then what it sets is kept and the rest defaulted', () => {
    const r = parse('name: P\nsandbox:\n  deny_read: [~/secrets]\n  network: {deny: ["*"]}\n  auto_allow_bash: false\n');
    expect(r.ok && profileSandbox(r.doc)).toEqual({ allow_write: [], deny_read: ['~/secrets'], network: { allow: [], deny: ['*'] }, auto_allow_bash: false });
  });

  it('given the section, when the result is changed, then the document is not', () => {
    const doc = normalizeDocument({ name: 'P', sandbox: { allow_write: ['/cache'] } });
    profileSandbox(doc).allow_write.push('/elsewhere');
    expect(doc.sandbox).toEqual({ allow_write: ['/cache'] });
  });
});

describe('withNetworkAllow', () => {
  it('given a profile without the section, when a host is added, then it has the section with only that host, the rest unchanged', () => {
    const doc = normalizeDocument({ name: 'P' });
    const out = withNetworkAllow(doc, 'registry.npmjs.org');
    expect(out).toEqual({ ...doc, sandbox: { network: { allow: ['registry.npmjs.org'] } } });
    expect(doc.sandbox).toBeUndefined();
  });

  it('given hosts allowed and denied already, when another is added, then it comes last and everything else is kept', () => {
    const doc = normalizeDocument({ name: 'P', sandbox: { allow_write: ['/c'], network: { allow: ['a.example.com'], deny: ['b.example.com'] }, auto_allow_bash: false } });
    expect(withNetworkAllow(doc, 'c.example.com:443').sandbox).toEqual({
      allow_write: ['/c'],
      network: { allow: ['a.example.com', 'c.example.com:443'], deny: ['b.example.com'] },
      auto_allow_bash: false,
    });
  });

  it('given a host the list holds already (in any case), then the same document comes back: no duplicate', () => {
    const doc = normalizeDocument({ name: 'P', sandbox: { network: { allow: ['API.Example.com'] } } });
    expect(withNetworkAllow(doc, 'api.example.com')).toBe(doc);
  });

  it('given a bare IPv6 address (as a proxy reports it), then it is added between brackets', () => {
    expect(withNetworkAllow(normalizeDocument({ name: 'P' }), '::1').sandbox?.network?.allow).toEqual(['[::1]']);
  });

  it.each(['*', '*.com', 'https://example.com', 'exa mple.com', ''])('given %j, then it is refused as invalid_input naming the field', (host) => {
    expect(() => withNetworkAllow(normalizeDocument({ name: 'P' }), host)).toThrow(expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining('sandbox.network.allow') }) as DomainError);
  });

  it('given a full list, then one more host is refused rather than written', () => {
    const allow = Array.from({ length: SANDBOX_LIST_MAX }, (_, i) => `h${i}.example.com`);
    const doc = normalizeDocument({ name: 'P', sandbox: { network: { allow } } });
    expect(() => withNetworkAllow(doc, 'one-more.example.com')).toThrow(expect.objectContaining({ code: 'invalid_input' }) as DomainError);
    expect(withNetworkAllow(doc, 'h7.example.com')).toBe(doc);
  });

  it('given the result, when parsed again, then the schema accepts it', () => {
    const out = withNetworkAllow(normalizeDocument({ name: 'P', sandbox: { allow_write: ['./build'] } }), '[2001:db8::1]:8443');
    expect(parseProfileDocument(JSON.parse(JSON.stringify(out)))).toMatchObject({ ok: true, doc: { sandbox: out.sandbox } });
  });
});

describe('sandboxLoosened', () => {
  const doc = (sandbox?: object) => normalizeDocument({ name: 'P', ...(sandbox ? { sandbox } : {}) });

  it('given widening changes, then each is named', () => {
    const before = doc({ deny_read: ['~/keys', 'secrets'], network: { allow: ['a.example.com'], deny: ['b.example.com'] }, auto_allow_bash: false });
    const after = doc({ allow_write: ['/srv'], deny_read: ['secrets'], network: { allow: ['a.example.com', 'c.example.com'] }, auto_allow_bash: true });
    expect(sandboxLoosened(before, after)).toEqual([
      'profile.sandbox.allow_write: let workers write "/srv"',
      'profile.sandbox.deny_read: no longer hide "~/keys"',
      'profile.sandbox.network.allow: allow "c.example.com"',
      'profile.sandbox.network.deny: no longer deny "b.example.com"',
      'profile.sandbox.auto_allow_bash: let Bash run without asking in the sandbox',
    ]);
  });

  it('given narrowing changes only (a host denied, a path hidden, an allow removed, Bash asked again), then nothing widens', () => {
    const before = doc({ allow_write: ['/srv'], network: { allow: ['a.example.com'] } });
    const after = doc({ deny_read: ['~/x'], network: { deny: ['a.example.com'] }, auto_allow_bash: false });
    expect(sandboxLoosened(before, after)).toEqual([]);
  });

  it('given a new profile, then whatever it allows is widening; its defaults are not', () => {
    expect(sandboxLoosened(undefined, doc())).toEqual([]);
    expect(sandboxLoosened(undefined, doc({ network: { allow: ['x.example.com'] } }))).toEqual(['profile.sandbox.network.allow: allow "x.example.com"']);
  });

  it('given paths and hosts a known profile (a built-in template) allows, then adding them widens nothing; others still do', () => {
    const template = doc({ allow_write: ['~/.npm'], network: { allow: ['registry.npmjs.org'] } });
    const after = doc({ allow_write: ['~/.npm'], network: { allow: ['registry.npmjs.org', 'evil.example.com'] } });
    expect(sandboxLoosened(undefined, after, [template])).toEqual(['profile.sandbox.network.allow: allow "evil.example.com"']);
  });

  it('given a host re-written in another case, then it is the same host; a path in another case is not the same path', () => {
    expect(sandboxLoosened(doc({ network: { allow: ['A.example.com'] } }), doc({ network: { allow: ['a.example.com'] } }))).toEqual([]);
    expect(sandboxLoosened(doc({ allow_write: ['/Srv'] }), doc({ allow_write: ['/srv'] }))).toHaveLength(1);
  });
});

describe('the host grammar (srt 0.0.83 domain patterns)', () => {
  it.each([
    'example.com', 'EXAMPLE.com', '*.example.com', '*.npmjs.org:443', 'api.github.com:443', 'localhost', 'localhost:3000', '127.0.0.1',
    '10.0.0.1:5432', '[::1]', '[::1]:443', '[2001:db8::1]', 'xn--bcher-kva.example', 'under_score.example.com', 'a.b:65535',
  ])('accepts %j in allow and deny', (entry) => {
    expect([networkEntryProblem(entry, 'allow'), networkEntryProblem(entry, 'deny')]).toEqual([null, null]);
  });

  it.each(['*', '*:22'])('accepts %j (every host) in deny only', (entry) => {
    expect(networkEntryProblem(entry, 'deny')).toBeNull();
    expect(networkEntryProblem(entry, 'allow')).toContain('may not be *');
  });

  it.each([
    ['', 'must not be empty'],
    ['*.com', 'too broad'],
    ['*.', 'too broad'],
    ['*example.com', 'only as a first label'],
    ['a.*.example.com', 'only as a first label'],
    ['com', 'with a dot'],
    ['.example.com', 'empty label'],
    ['example.com.', 'empty label'],
    ['a..example.com', 'empty label'],
    ['https://example.com', 'not a URL'],
    ['example.com/path', 'not a URL'],
    ['example.com:0', 'port'],
    ['example.com:080', 'port'],
    ['example.com:65536', 'port'],
    ['example.com:https', 'port'],
    ['::1', 'between [ and ]'],
    ['2001:db8::1:443', 'between [ and ]'],
    ['[::1', 'IPv6'],
    ['[::1]junk', 'port'],
    ['[example.com]', 'IPv6'],
    ['[fe80::1%eth0]', 'IPv6'],
    ['exa mple.com', 'only letters'],
    ['evil.com\r\nHost: x.example.com', 'control characters'],
    ['bücher.example', 'xn--'],
  ])('refuses %j: %s', (entry, why) => {
    expect(networkEntryProblem(entry, 'allow')).toContain(why);
    expect(networkEntryProblem(entry, 'deny')).not.toBeNull();
  });

  it('refuses an entry longer than a host name can be', () => {
    expect(networkEntryProblem(`${'x'.repeat(300)}.com`, 'allow')).toContain('at most');
  });
});

describe('the path forms', () => {
  it.each(['/srv/cache', '~', '~/.npm', '~/', 'build', './out', '../shared', 'a b/c'])('accepts %j', (p) => expect(sandboxPathProblem(p)).toBeNull());

  it.each([
    ['', 'empty'],
    ['~root/x', 'not ~user'],
    ['a\0b', 'NUL'],
    ['a\nb', 'control'],
    ['C:\\x', '/ between'],
    ['~/.config/*token*', 'not a pattern'],
    ['src/{a,b}', 'not a pattern'],
  ])('refuses %j: %s', (p, why) => expect(sandboxPathProblem(p)).toContain(why));

  it('refuses a path longer than the limit', () => expect(sandboxPathProblem('/x'.repeat(2049))).toContain('at most'));
});

describe('the sandbox section in a profile document', () => {
  it('given a full section, then it is read as written', () => {
    const r = parse('name: S\nsandbox:\n  allow_write: [~/.npm, /srv/cache, build]\n  deny_read: [.env]\n  network:\n    allow: [registry.npmjs.org, "*.github.com:443"]\n    deny: ["*:22"]\n  auto_allow_bash: true\n');
    expect(r.ok && r.doc.sandbox).toEqual({
      allow_write: ['~/.npm', '/srv/cache', 'build'],
      deny_read: ['.env'],
      network: { allow: ['registry.npmjs.org', '*.github.com:443'], deny: ['*:22'] },
      auto_allow_bash: true,
    });
  });

  it('given a profile without one, then the document has no sandbox key (it writes back as it was)', () => {
    const r = parse('name: S\n');
    expect(r.ok && 'sandbox' in r.doc).toBe(false);
  });

  it.each([
    ['sandbox: {allow_write: "/srv"}', 'sandbox.allow_write'],
    ['sandbox: {allow_write: [7]}', 'sandbox.allow_write'],
    ['sandbox: {deny_read: ["~root/.ssh"]}', 'sandbox.deny_read: "~root/.ssh" must start with ~/'],
    ['sandbox: {deny_read: ["a\\0b"]}', 'sandbox.deny_read: "a\\u0000b" must not contain NUL'],
    ['sandbox: {network: {allow: ["*"]}}', 'sandbox.network.allow: "*" may not be *'],
    ['sandbox: {network: {allow: ["*.com"]}}', 'sandbox.network.allow: "*.com" is too broad'],
    ['sandbox: {network: {deny: ["https://x.example.com"]}}', 'sandbox.network.deny: "https://x.example.com" must be a host'],
    ['sandbox: {network: {ask: ["x.example.com"]}}', 'sandbox.network.ask'],
    ['sandbox: {network: [x.example.com]}', 'sandbox.network'],
    ['sandbox: {auto_allow_bash: "yes"}', 'sandbox.auto_allow_bash'],
    ['sandbox: {allow_read: [/x]}', 'sandbox.allow_read'],
  ])('refuses %s naming %s', (line, field) => {
    const r = parse(`name: S\n${line}\n`);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.join('\n')).toContain(field);
  });

  it('refuses a list longer than the limit, naming it', () => {
    const hosts = Array.from({ length: SANDBOX_LIST_MAX + 1 }, (_, i) => `h${i}.example.com`);
    const r = parseProfileDocument({ name: 'S', sandbox: { network: { allow: hosts } } });
    expect(!r.ok && r.errors.join('\n')).toContain('sandbox.network.allow');
  });
});
