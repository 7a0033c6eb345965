/**
 * The agent runtimes' versions Brainstem was tested with, and what to say of another one. Pure.
 * The oldest is the oldest release the real-runtime specs passed on; the newest is the pin in .ci/real-clis.
 */
export interface TestedRange {
  oldest: string;
  newest: string;
}

export const TESTED_VERSIONS: Readonly<Record<string, TestedRange>> = {
  'claude-code': { oldest: '2.1.197', newest: '2.1.332' },
  codex: { oldest: '0.169.0', newest: '0.171.0' },
  'gemini-cli': { oldest: '0.61.0', newest: '0.61.0' },
  opencode: { oldest: '1.18.33', newest: '1.18.33' },
};

/** Longest part of a runtime's output quoted in a warning. */
const QUOTED_CHARS = 80;

/**
 * The version in what `<exe> --version` printed: its first x.y.z ("2.1.332 (Claude Code)", "codex-cli 0.169.0",
 * "0.61.0"); null if there is none.
 */
export function parseVersion(output: string): string | null {
  return /(?<![\d.])(\d+)\.(\d+)\.(\d+)(?![\d])/.exec(output)?.slice(1, 4).join('.') ?? null;
}

/** Numeric comparison of two x.y.z versions: negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if (pa[i] !== pb[i]) return pa[i] - pb[i];
  }
  return 0;
}

function describeRange(range: TestedRange): string {
  return range.oldest === range.newest ? range.oldest : `${range.oldest} to ${range.newest}`;
}

/**
 * The warning for what `<exe> --version` of `runtime` gave: its output, or null if it printed nothing in time
 * (it failed or timed out); null when the version is in the tested range or the runtime has none.
 */
export function versionWarning(runtime: string, output: string | null): string | null {
  const range = TESTED_VERSIONS[runtime];
  if (!range) return null;
  const tested = describeRange(range);
  const version = output === null ? null : parseVersion(output);
  if (version === null) {
    const printed = output === null ? 'nothing' : JSON.stringify(output.trim().slice(0, QUOTED_CHARS));
    return `${runtime}: its version could not be read (--version printed ${printed}); tested with ${tested}`;
  }
  if (compareVersions(version, range.oldest) < 0) return `${runtime} ${version} is older than tested (${tested}); update it`;
  if (compareVersions(version, range.newest) > 0) return `${runtime} ${version} is newer than tested (${tested}); report problems`;
  return null;
}
