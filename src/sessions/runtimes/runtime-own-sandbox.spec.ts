import { AGENT_RUNTIMES } from '../../common/agent-runtimes';
import { ownSandboxArgs } from './runtime-own-sandbox';

describe('ownSandboxArgs', () => {
  it("given a codex worker in Brainstem's sandbox, then codex's own sandbox is turned off", () => {
    expect(ownSandboxArgs('codex', true)).toEqual(['--sandbox', 'danger-full-access']);
  });

  it.each([...AGENT_RUNTIMES.map((r) => r.name), 'command'])("given a %s worker outside Brainstem's sandbox, then its own sandbox is left as configured", (runtime) => {
    expect(ownSandboxArgs(runtime, false)).toEqual([]);
  });

  it.each(['claude-code', 'gemini-cli', 'opencode', 'command'])("given a %s worker in Brainstem's sandbox, then no flag is added (its own sandbox is off unless its settings ask)", (runtime) => {
    expect(ownSandboxArgs(runtime, true)).toEqual([]);
  });
});
