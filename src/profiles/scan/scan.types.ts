import { EmitRuntime } from '../emitters';
import { ProfileDoc } from '../profile.schema';

/** A project's runtime files, keyed by `/`-separated path relative to the project directory. */
export type ScanFiles = ReadonlyMap<string, string>;

export type ScanWarningCode = 'not_mapped' | 'malformed' | 'ambiguous' | 'lossy';

export interface ScanWarning {
  code: ScanWarningCode;
  /** The file the warning is about. */
  path: string;
  message: string;
}

export interface ScanOptions {
  /** Absolute project directory, used to point local skills at the project's own `.claude/skills/<name>`. */
  projectDir?: string;
}

export interface ScanResult {
  runtime: EmitRuntime;
  /** The id the files were emitted under (agent name, marked block); apply under this id to re-emit the same paths. */
  profileId: string;
  profile: ProfileDoc;
  /** The files the proposal was read from. */
  filesUsed: string[];
  warnings: ScanWarning[];
}

export type Scanner = (files: ScanFiles, opts: ScanOptions) => ScanResult;
