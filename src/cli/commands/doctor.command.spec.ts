import { runtimeCheck, sandboxCheck } from './doctor.command';

describe('sandboxCheck', () => {
  const available = { available: true, missing: [], reason: null };
  const missing = { available: false, missing: ['bwrap'], reason: "bwrap not found on PATH (install Debian's bubblewrap)" };

  it('given the tools and a probe that ran, then it works, whatever the mode requires', () => {
    expect(sandboxCheck('required', available, null)).toMatchObject({ status: 'ok', detail: expect.stringContaining('works here') });
    expect(sandboxCheck('auto', available, null).status).toBe('ok');
  });

  it('given bwrap missing, then required fails, auto warns that workers run unsandboxed, off is only noted; each says why', () => {
    expect(sandboxCheck('required', missing, null)).toEqual({ name: 'sandbox', status: 'fail', detail: expect.stringContaining("install Debian's bubblewrap") });
    expect(sandboxCheck('auto', missing, null)).toMatchObject({ status: 'warn', detail: expect.stringContaining('workers run unsandboxed: bwrap not found') });
    expect(sandboxCheck('off', missing, null)).toMatchObject({ status: 'ok', detail: expect.stringContaining('it would not work here: bwrap not found') });
  });

  it('given the tools but a probe bubblewrap refused (no user namespaces), then it is not ok, and bubblewrap\'s words are given', () => {
    const refusal = '"bwrap: No permissions to creating new namespace"';
    expect(sandboxCheck('required', available, refusal)).toMatchObject({ status: 'fail', detail: expect.stringContaining(`bubblewrap cannot make a sandbox here: ${refusal}`) });
    expect(sandboxCheck('auto', available, refusal).status).toBe('warn');
  });

  it('given it works but the mode is off, then it warns that workers run unsandboxed', () => {
    expect(sandboxCheck('off', available, null)).toMatchObject({ status: 'warn', detail: expect.stringContaining('workers run unsandboxed') });
  });
});

describe('runtimeCheck', () => {
  it('given a runtime in its tested range, then its version and path; one not on PATH is no failure', () => {
    expect(runtimeCheck('codex', '/bin/codex', 'codex-cli 0.171.0')).toEqual({ name: 'codex', status: 'ok', detail: '0.171.0 (/bin/codex)' });
    expect(runtimeCheck('codex', null, null)).toEqual({ name: 'codex', status: 'ok', detail: 'not on PATH' });
  });

  it('given a version outside the tested range, or none printed, then a warning', () => {
    expect(runtimeCheck('codex', '/bin/codex', 'codex-cli 0.100.0')).toMatchObject({ status: 'warn', detail: expect.stringContaining('older than tested') });
    expect(runtimeCheck('codex', '/bin/codex', null)).toMatchObject({ status: 'warn', detail: expect.stringContaining('could not be read') });
  });
});
