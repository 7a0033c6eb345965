import { codexProtocol } from './codex.runtime';

describe('codexProtocol.args', () => {
  const spec = { args: ['-m', 'gpt-5'], profile_args: ['-c', 'sandbox_mode="workspace-write"'] };

  it("given a worker in Brainstem's sandbox, then codex's own sandbox is turned off, before a resume", () => {
    expect(codexProtocol.args({ ...spec, sandboxed: true }, 'thread-1')).toEqual([
      'exec', '--json', '-c', 'sandbox_mode="workspace-write"', '--sandbox', 'danger-full-access', '-m', 'gpt-5', 'resume', 'thread-1', '-',
    ]);
  });

  it.each([[false], [undefined]])("given a worker not in Brainstem's sandbox (sandboxed: %s), then the profile's sandbox_mode stands", (sandboxed) => {
    expect(codexProtocol.args({ ...spec, sandboxed }, null)).toEqual(['exec', '--json', '-c', 'sandbox_mode="workspace-write"', '-m', 'gpt-5', '-']);
  });
});
