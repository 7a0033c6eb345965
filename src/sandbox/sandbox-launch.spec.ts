import { POLICY_ENV, innerScript, launcherSettings, launcherSpawn, parsePolicy, shellQuote } from './sandbox-launch';
import { SandboxPolicy } from './sandbox-policy';

const policy: SandboxPolicy = {
  allow_write: ['/w'],
  deny_write: ['/data'],
  deny_read: ['/data'],
  allow_read: [],
  network: { allow: ['127.0.0.1:4820'], deny: ['evil.example'] },
  loopback_ports: [4820],
  tmp_dir: '/tmp/brainstem-sandbox/cs_1',
  make_dirs: [],
};

describe('the sandbox launcher', () => {
  it('given a worker command, then the service starts the launcher with it and hands the policy over in the environment', () => {
    const spawn = launcherSpawn({ command: 'claude', args: ['-p'], env: { A: '1' } }, policy, '/usr/bin/node');
    expect(spawn.command).toBe('/usr/bin/node');
    expect(spawn.args.slice(1)).toEqual(['claude', '-p']);
    expect(JSON.parse(spawn.env[POLICY_ENV])).toEqual(policy);
    expect(spawn.env.A).toBe('1');
  });

  it('given what the service handed over, then the policy back with its temp dir to make; anything else is refused', () => {
    expect(parsePolicy(JSON.stringify(policy)).make_dirs).toEqual(['/tmp/brainstem-sandbox/cs_1']);
    expect(() => parsePolicy(undefined)).toThrow(/not set/);
    expect(() => parsePolicy(JSON.stringify({ ...policy, allow_write: 'all' }))).toThrow(/not a sandbox policy/);
    expect(() => parsePolicy(JSON.stringify({ ...policy, loopback_ports: [70000] }))).toThrow(/not a sandbox policy/);
  });

  it("given a policy, then srt's configuration says the same", () => {
    expect(launcherSettings(policy)).toEqual({
      network: { allowedDomains: ['127.0.0.1:4820'], deniedDomains: ['evil.example'] },
      filesystem: { denyRead: ['/data'], allowRead: [], allowWrite: ['/w'], denyWrite: ['/data'] },
    });
  });

  it('given arguments with quotes and spaces, then the script runs them as given, after the forwards are listening', () => {
    const script = innerScript(policy, '/tmp/brainstem-sandbox/cs_1/.brainstem-env', 'node', ["it's", 'a b', '$HOME']);
    expect(script.split('\n').slice(-1)[0]).toBe(`exec 'node' 'it'\\''s' 'a b' '$HOME'`);
    expect(script).toContain('socat TCP-LISTEN:4820,bind=127.0.0.1');
    // 4820 is 12D4: the forward's listening line in /proc/net/tcp.
    expect(script).toContain("':12D4 00000000:0000 0A'");
    expect(script.indexOf('socat')).toBeLessThan(script.lastIndexOf("exec 'node'"));
  });

  it('given no loopback port, then nothing is forwarded', () => {
    expect(innerScript({ ...policy, loopback_ports: [] }, '/e', 'true', [])).not.toContain('socat');
  });

  it('quotes for the shell', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
