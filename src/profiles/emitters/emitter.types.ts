import { ProfileDoc } from '../profile.schema';

/** The runtimes that have an emitter (every named runtime; `auto` is resolved before emitting). */
export const EMIT_RUNTIMES = ['claude-code', 'codex', 'gemini-cli', 'opencode'] as const;
export type EmitRuntime = (typeof EMIT_RUNTIMES)[number];

/**
 * How a file joins what is already on disk:
 * - `json` / `toml`: the emitted keys are merged into the existing document (objects merge, other values replace);
 *   keys the profile does not emit are the user's and survive, except those the last apply emitted (the manifest
 *   keeps that fragment), which are withdrawn.
 * - `block`: the content is a marked block inside a shared text file (AGENTS.md, GEMINI.md); the rest of the file survives.
 * - `owned`: the file belongs to the profile (named after it) and is written whole.
 */
export type FileMerge = 'json' | 'toml' | 'block' | 'owned';

export interface EmittedFile {
  /** Relative to the target directory, `/`-separated. */
  path: string;
  content: string;
  merge: FileMerge;
}

export type EmitWarningCode = 'hook_skipped' | 'not_mapped' | 'fallback_ignored' | 'skill_not_injected' | 'model_not_mapped';

export interface EmitWarning {
  code: EmitWarningCode;
  message: string;
}

/** A local skill's files, read by the caller (emitters do no I/O). Paths are relative to the skill directory. */
export interface SkillFiles {
  name: string;
  files: Array<{ path: string; content: string }>;
}

export interface EmitContext {
  profileId: string;
  /** Base URL of this service; the reserved `brainstem` MCP server is `<serviceUrl>/mcp`. */
  serviceUrl: string;
  /** Resolved local skills, in the profile's order. */
  skills: SkillFiles[];
}

export interface EmitResult {
  files: EmittedFile[];
  warnings: EmitWarning[];
}

export type Emitter = (profile: ProfileDoc, ctx: EmitContext) => EmitResult;
