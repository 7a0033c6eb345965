import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findExecutable } from '../../src/common/executable';
import { tempDir } from '../support/temp-dir';

const BIN = resolve(__dirname, '../../bin/brainstem.js');

/**
 * `brainstem doctor` as a process on this machine, which has Debian's bubblewrap, socat and ripgrep (.ci/run installs
 * them): its probe runs the real bubblewrap, inside another one for a machine that allows no user namespaces.
 */
describe('brainstem doctor', () => {
  const dir = tempDir('brainstem-doctor-');
  afterAll(() => dir.remove());
  const tool = (name: string): string => {
    const path = findExecutable(name, process.env.PATH ?? '', process.cwd());
    if (!path) throw new Error(`${name} is not on PATH: install Debian's bubblewrap, socat and ripgrep (.ci/run does)`);
    return path;
  };

  /** The command, with a configuration of its own (data and profiles under the temp dir); `wrap`: the argv before it. */
  function doctor(env: Record<string, string>, wrap: string[] = []): Promise<{ code: number | null; out: string; err: string }> {
    const argv = [...wrap, process.execPath, BIN, 'doctor', '--json'];
    const config = { HOME: dir.path, BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(dir.path, 'profiles') };
    const child = spawn(argv[0], argv.slice(1), { env: { ...config, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    return new Promise((r) => child.on('close', (code) => r({ code, out, err })));
  }
  const checks = (out: string) => JSON.parse(out) as Array<{ name: string; status: string; detail: string }>;
  const sandboxLine = (out: string) => checks(out).find((c) => c.name === 'sandbox');

  it('given this machine, then sandboxing works, the data directory is writable, and it exits 0', async () => {
    const r = await doctor({ PATH: process.env.PATH!, BRAINSTEM_SANDBOX: 'required' });
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(sandboxLine(r.out)).toEqual({ name: 'sandbox', status: 'ok', detail: expect.stringContaining('works here') });
    expect(checks(r.out)).toContainEqual({ name: 'data dir', status: 'ok', detail: expect.stringContaining(join(dir.path, 'journal')) });
  }, 60000);

  it('given a PATH without bwrap and BRAINSTEM_SANDBOX=required, then it names bubblewrap and exits 1', async () => {
    const bin = join(dir.path, 'bin-without-bwrap');
    mkdirSync(bin);
    for (const name of ['socat', 'rg']) symlinkSync(tool(name), join(bin, name));
    const r = await doctor({ PATH: bin, BRAINSTEM_SANDBOX: 'required' });
    expect(r.code).toBe(1);
    expect(sandboxLine(r.out)).toEqual({ name: 'sandbox', status: 'fail', detail: expect.stringContaining("install Debian's bubblewrap") });
  }, 60000);

  it('given a machine that allows no user namespaces (inside a bubblewrap that forbids them), then it says bubblewrap cannot make a sandbox: a failure when required, a warning with auto', async () => {
    const noUserns = [tool('bwrap'), '--ro-bind', '/', '/', '--bind', dir.path, dir.path, '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-user', '--disable-userns', '--'];
    const required = await doctor({ PATH: process.env.PATH!, BRAINSTEM_SANDBOX: 'required' }, noUserns);
    expect(required.code).toBe(1);
    expect(sandboxLine(required.out)).toEqual({ name: 'sandbox', status: 'fail', detail: expect.stringMatching(/bubblewrap cannot make a sandbox here: "bwrap: .+"/) });
    const auto = await doctor({ PATH: process.env.PATH!, BRAINSTEM_SANDBOX: 'auto' }, noUserns);
    expect(auto.code).toBe(0);
    expect(sandboxLine(auto.out)).toEqual({ name: 'sandbox', status: 'warn', detail: expect.stringContaining('workers run unsandboxed: bubblewrap cannot make a sandbox here') });
  }, 60000);
});
