import { AGENT_RUNTIMES } from '../../common/agent-runtimes';
import { TESTED_VERSIONS, compareVersions, parseVersion, versionWarning } from './runtime-versions';

describe('parseVersion', () => {
  it.each([
    ['2.1.332 (Claude Code)', '2.1.332'],
    ['codex-cli 0.169.0', '0.169.0'],
    ['0.61.0\n', '0.61.0'],
    ['1.18.33', '1.18.33'],
    ['v10.2.3-beta.1', '10.2.3'],
  ])('given %j printed, then the version is %s', (output, version) => {
    expect(parseVersion(output)).toBe(version);
  });

  it.each([[''], ['command not found'], ['2.1']])('given %j printed, then there is no version', (output) => {
    expect(parseVersion(output)).toBeNull();
  });
});

describe('compareVersions', () => {
  it('given versions that differ in a part past 9, then they compare by number, not by text', () => {
    expect(compareVersions('2.1.332', '2.1.197')).toBeGreaterThan(0);
    expect(compareVersions('0.9.0', '0.10.0')).toBeLessThan(0);
    expect(compareVersions('1.18.33', '1.18.33')).toBe(0);
  });
});

describe('versionWarning', () => {
  it('given every agent runtime, then each has a tested range', () => {
    expect(Object.keys(TESTED_VERSIONS).sort()).toEqual(AGENT_RUNTIMES.map((r) => r.name).sort());
  });

  it.each([['2.1.197 (Claude Code)'], ['2.1.250 (Claude Code)'], ['2.1.332 (Claude Code)']])('given claude %s, within the range, then there is no warning', (output) => {
    expect(versionWarning('claude-code', output)).toBeNull();
  });

  it('given an older claude, then the warning names the version and the tested range', () => {
    expect(versionWarning('claude-code', '2.0.5 (Claude Code)')).toBe('claude-code 2.0.5 is older than tested (2.1.197 to 2.1.332); update it');
  });

  it('given a newer codex, then the warning asks for problems to be reported', () => {
    expect(versionWarning('codex', 'codex-cli 0.172.0')).toBe('codex 0.172.0 is newer than tested (0.169.0 to 0.171.0); report problems');
  });

  it('given output with no version, then the warning quotes it', () => {
    expect(versionWarning('gemini-cli', 'Error: cannot find module\n')).toBe(
      'gemini-cli: its version could not be read (--version printed "Error: cannot find module"); tested with 0.61.0',
    );
  });

  it('given no output (it failed or timed out), then the version could not be read', () => {
    expect(versionWarning('opencode', null)).toBe('opencode: its version could not be read (--version printed nothing); tested with 1.18.33');
  });

  it('given a runtime without a tested range, then there is no warning', () => {
    expect(versionWarning('command', 'anything')).toBeNull();
  });
});
