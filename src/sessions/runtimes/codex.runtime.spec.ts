import { codexProtocol } from './codex.runtime';
import { sandboxPolicy } from '../../sandbox/sandbox-policy';

const POLICY = sandboxPolicy({
  session_id: 'cs_1', runtime: 'codex', cwd: '/w', home: '/home/u', service_home: '/home/u', env: {}, data_dir: '/data', profiles_dir: '/profiles', worktrees_dir: '/data/worktrees',
  session_config_dir: '/data/session-config/cs_1', service_url: 'http://127.0.0.1:4820', tmp_root: '/tmp', git_common_dir: null, data_dir_entries: [], profile: null, config_urls: [],
});

describe('codexProtocol.args', () => {
  const spec = { args: ['-m', 'gpt-5'], profile_args: ['-c', 'sandbox_mode="workspace-write"'] };

  it("given a worker in Brainstem's sandbox, then codex's own sandbox is turned off, before a resume", () => {
    expect(codexProtocol.args({ ...spec, sandbox: POLICY }, 'thread-1')).toEqual([
      'exec', '--json', '-c', 'sandbox_mode="workspace-write"', '--sandbox', 'danger-full-access', '-m', 'gpt-5', 'resume', 'thread-1', '-',
    ]);
  });

  it("given a worker not in Brainstem's sandbox, then the profile's sandbox_mode stands", () => {
    expect(codexProtocol.args({ ...spec, sandbox: null }, null)).toEqual(['exec', '--json', '-c', 'sandbox_mode="workspace-write"', '-m', 'gpt-5', '-']);
  });
});
