import { DomainError } from '../../common/domain-error';
import { EmitRuntime } from '../emitters';
import { scanClaudeCode } from './claude-code.scanner';
import { scanCodex } from './codex.scanner';
import { ScanFiles, ScanOptions, ScanResult, Scanner } from './scan.types';

export { ScanFiles, ScanOptions, ScanResult, ScanWarning } from './scan.types';
export { SCAN_PATTERNS, readScanFiles } from './scan-fs';

const SCANNERS: Partial<Record<EmitRuntime, Scanner>> = {
  'claude-code': scanClaudeCode,
  codex: scanCodex,
};
export const SCAN_RUNTIMES = Object.keys(SCANNERS) as EmitRuntime[];

/** The files that show a runtime was configured, in the order runtimes are tried when none is named. */
const MARKERS: Array<[EmitRuntime, RegExp]> = [
  ['claude-code', /^(\.claude\/settings\.json|\.claude\/agents\/[^/]+\.md|\.mcp\.json)$/],
  ['codex', /^(\.codex\/config\.toml|AGENTS\.md)$/],
];

/** The profile that would produce a project's runtime files. Pure: the caller reads the files. */
export function scanProfile(files: ScanFiles, runtime: EmitRuntime | 'auto' | undefined, opts: ScanOptions = {}): ScanResult {
  const named = runtime === 'auto' ? undefined : runtime;
  if (named !== undefined) {
    const scanner = SCANNERS[named];
    if (!scanner) throw new DomainError('invalid_input', `scan: runtime ${named} cannot be scanned yet (${SCAN_RUNTIMES.join(', ')} can)`);
    if (!MARKERS.some(([r, re]) => r === named && [...files.keys()].some((p) => re.test(p)))) {
      throw new DomainError('invalid_input', `scan: no ${named} files in the project`);
    }
    return scanner(files, opts);
  }
  const found = MARKERS.find(([, re]) => [...files.keys()].some((p) => re.test(p)));
  if (!found) throw new DomainError('invalid_input', `scan: no runtime files found (looked for ${SCAN_RUNTIMES.join(', ')} configuration)`);
  return (SCANNERS[found[0]] as Scanner)(files, opts);
}
