import { DomainError } from '../../common/domain-error';
import { EmitRuntime } from '../emitters';
import { scanClaudeCode } from './claude-code.scanner';
import { scanCodex } from './codex.scanner';
import { scanGeminiCli } from './gemini-cli.scanner';
import { scanOpencode } from './opencode.scanner';
import { ScanFiles, ScanOptions, ScanResult, Scanner } from './scan.types';

export { ScanFiles, ScanOptions, ScanResult, ScanWarning } from './scan.types';
export { SCAN_PATTERNS, readScanFiles } from './scan-fs';

const SCANNERS: Record<EmitRuntime, Scanner> = {
  'claude-code': scanClaudeCode,
  codex: scanCodex,
  'gemini-cli': scanGeminiCli,
  opencode: scanOpencode,
};

/**
 * The files that show a runtime was configured, in the order runtimes are tried when none is named: first a
 * runtime's own config (an opencode project may well have an AGENTS.md), then the shared-looking files.
 */
const MARKERS: Array<[EmitRuntime, RegExp]> = [
  ['claude-code', /^(\.claude\/settings\.json|\.claude\/agents\/[^/]+\.md)$/],
  ['codex', /^\.codex\/config\.toml$/],
  ['opencode', /^(opencode\.json|\.opencode\/agent\/[^/]+\.md)$/],
  ['gemini-cli', /^\.gemini\/settings\.json$/],
  ['claude-code', /^\.mcp\.json$/],
  ['codex', /^AGENTS\.md$/],
  ['gemini-cli', /^GEMINI\.md$/],
];

/** The profile that would produce a project's runtime files. Pure: the caller reads the files. */
export function scanProfile(files: ScanFiles, runtime: EmitRuntime | 'auto' | undefined, opts: ScanOptions = {}): ScanResult {
  const named = runtime === 'auto' ? undefined : runtime;
  if (named !== undefined) {
    const scanner = SCANNERS[named];
    if (!MARKERS.some(([r, re]) => r === named && [...files.keys()].some((p) => re.test(p)))) {
      throw new DomainError('scan_found_nothing', `scan: no ${named} files in the project`);
    }
    return scanner(files, opts);
  }
  const found = MARKERS.find(([, re]) => [...files.keys()].some((p) => re.test(p)));
  if (!found) throw new DomainError('scan_found_nothing', `scan: no runtime files found (looked for claude-code, codex, opencode and gemini-cli configuration)`);
  return SCANNERS[found[0]](files, opts);
}
