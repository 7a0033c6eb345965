import { join } from 'node:path';
import { DomainError } from '../../common/domain-error';
import { AGENT_RUNTIMES } from '../../common/agent-runtimes';
import { findExecutable } from '../../common/executable';
import { EMIT_RUNTIMES, EmitResult, EmitRuntime, EmitWarning, SkillFiles, emitProfile } from '../emitters';
import { LintFinding, LintResult } from '../profile.lint';
import { ProfileDoc, Runtime } from '../profile.schema';
import { SaveWarning } from '../profile-views';
import { ProfilesService } from '../profiles.service';
import { ApplyFs } from './apply-fs.port';
import {
  ApplyManifest,
  DriftReason,
  FileAction,
  PlannedFile,
  WithdrawnAction,
  WithdrawnFile,
  legacyManifestPath,
  manifestPath,
  nextManifest,
  parentDirs,
  planFiles,
  planWithdrawn,
  selectManifest,
  withdrawnCandidates,
} from './apply-plan';

export interface ApplyRequest {
  runtime?: Runtime;
  dir?: string;
}

export interface PreviewResult {
  runtime: EmitRuntime;
  /** How the runtime was chosen: named (by the request or the profile) or resolved from `auto`. */
  runtime_source: 'requested' | 'profile' | 'auto';
  dir: string;
  /**
   * `content` is the file after apply; `current` what is on disk now, for a diff: null when absent, or when over
   * PREVIEW_CURRENT_MAX_BYTES (then `current_too_large` is set).
   */
  files: Array<{ path: string; content: string; current: string | null; current_too_large?: true; action: FileAction | WithdrawnAction; reason?: DriftReason }>;
  warnings: EmitWarning[];
  /** Lint errors and missing skills: apply refuses while there are any. */
  errors: LintFinding[];
}

/** What a preview returns of a file on disk: enough for any config file, small enough for a page to diff. */
export const PREVIEW_CURRENT_MAX_BYTES = 256 * 1024;

function currentOf(text: string | null | undefined): { current: string | null; current_too_large?: true } {
  if (text === null || text === undefined) return { current: null };
  return Buffer.byteLength(text, 'utf8') > PREVIEW_CURRENT_MAX_BYTES ? { current: null, current_too_large: true } : { current: text };
}

export interface ApplyResult {
  runtime: EmitRuntime;
  dir: string;
  manifest: string;
  files: Array<{ path: string; action: FileAction | WithdrawnAction | 'overwritten' }>;
  warnings: EmitWarning[];
}

export type ApplyTrigger = 'api' | 'auto_apply';

const DRIFT_TEXT: Record<DriftReason, string> = {
  edited_since_apply: 'changed since the last apply',
  not_written_by_brainstem: 'already there and not written by Brainstem',
  comments_would_be_lost: 'its comments would be lost',
};

interface Plan {
  runtime: EmitRuntime;
  runtime_source: PreviewResult['runtime_source'];
  dir: string;
  planned: PlannedFile[];
  /** What is on disk now at each planned or withdrawn path (null: absent). */
  existing: ReadonlyMap<string, string | null>;
  /** Whole files the last apply wrote that this one no longer emits. */
  withdrawn: WithdrawnFile[];
  /** Directories the planned files need that do not exist yet (Brainstem creates them). */
  createdDirs: string[];
  manifest: ApplyManifest | null;
  /** The manifest was read from the legacy per-profile file: apply moves it to this runtime's own file. */
  legacyManifest: boolean;
  warnings: EmitWarning[];
  errors: LintFinding[];
}

/**
 * Preview and apply: emits the profile for a runtime, merges the files into what is in the target directory,
 * and (apply) writes them with a manifest under `.brainstem/` so re-applies are idempotent and hand edits show as drift.
 */
export class ProfileApplier {
  constructor(
    private readonly profiles: ProfilesService,
    private readonly fs: ApplyFs,
    private readonly env: { serviceUrl: () => string; pathEnv: () => string; home: () => string },
  ) {}

  async preview(id: string, req: ApplyRequest): Promise<PreviewResult> {
    const plan = await this.plan(id, req);
    return {
      runtime: plan.runtime,
      runtime_source: plan.runtime_source,
      dir: plan.dir,
      files: [
        ...plan.planned.map(({ path, content, action, reason }) => ({ path, content, ...currentOf(plan.existing.get(path)), action, ...(reason ? { reason } : {}) })),
        ...plan.withdrawn.map(({ path, content, action }) => ({ path, content, ...currentOf(plan.existing.get(path)), action })),
      ],
      warnings: plan.warnings,
      errors: plan.errors,
    };
  }

  async apply(id: string, req: ApplyRequest & { force?: boolean }, trigger: ApplyTrigger = 'api'): Promise<ApplyResult> {
    let plan: Plan | null = null;
    try {
      plan = await this.plan(id, req);
      const result = await this.write(id, plan, req.force === true);
      await this.journal(id, trigger, plan.dir, plan.runtime, { ok: true, files: result.files, error: null });
      return result;
    } catch (e) {
      // A request refused before it named a usable target is bad input, answered and not journaled; an auto-apply
      // failure is journaled whatever it was, since nobody else sees it.
      if (plan || trigger === 'auto_apply') {
        await this.journal(id, trigger, plan?.dir ?? req.dir ?? '', plan?.runtime ?? req.runtime ?? '', { ok: false, files: [], error: (e as Error).message });
      }
      throw e;
    }
  }

  /** auto_apply: after a save, apply to `auto_apply_dir`. A failure never fails the save: it is journaled, and answered as a warning. */
  async autoApply(id: string, doc: ProfileDoc): Promise<SaveWarning[]> {
    try {
      await this.apply(id, { dir: doc.auto_apply_dir }, 'auto_apply');
      return [];
    } catch (e) {
      const message = `the profile was saved, but applying it to ${doc.auto_apply_dir} failed: ${(e as Error)?.message ?? String(e)}`;
      return [{ path: 'auto_apply_dir', code: 'auto_apply_failed', message }];
    }
  }

  private async write(id: string, plan: Plan, force: boolean): Promise<ApplyResult> {
    if (plan.errors.length) {
      throw new DomainError('profile_has_errors', `profile ${id} has ${plan.errors.length} error(s); fix them before applying`, { errors: plan.errors });
    }
    const drift = plan.planned.filter((f): f is PlannedFile & { reason: DriftReason } => f.reason !== undefined);
    if (drift.length && !force) {
      const named = drift.map((f) => `${f.path} (${DRIFT_TEXT[f.reason]})`).join(', ');
      throw new DomainError('apply_drift', `applying would lose changes in ${named}; apply with force: true to overwrite`, {
        files: drift.map((f) => f.path),
        reasons: Object.fromEntries(drift.map((f) => [f.path, f.reason])),
      });
    }
    const removedDirs = await this.removeWithdrawn(plan);
    const manifest = nextManifest(id, plan.runtime, plan.planned, plan.manifest, { created: plan.createdDirs, removed: removedDirs });
    const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
    const changed = plan.planned.filter((f) => f.action !== 'unchanged');
    const manifestChanged = plan.legacyManifest || JSON.stringify(plan.manifest) !== JSON.stringify(manifest);
    if (changed.length || manifestChanged) {
      await this.fs.writeAll(plan.dir, [...changed, ...(manifestChanged ? [{ path: manifestPath(id, plan.runtime), content: manifestText }] : [])]);
    }
    if (plan.legacyManifest) await this.fs.remove(plan.dir, legacyManifestPath(id));
    return {
      runtime: plan.runtime,
      dir: plan.dir,
      manifest: manifestPath(id, plan.runtime),
      files: [
        ...plan.planned.map((f) => ({ path: f.path, action: f.action === 'drift' ? ('overwritten' as const) : f.action })),
        ...plan.withdrawn.map(({ path, action }) => ({ path, action })),
      ],
      warnings: plan.warnings,
    };
  }

  /**
   * Removes the withdrawn files nobody changed since Brainstem wrote them, then the directories it created for them
   * that are left empty (never one a planned file needs); answers the directories removed.
   */
  private async removeWithdrawn(plan: Plan): Promise<string[]> {
    const removed = plan.withdrawn.filter((f) => f.action === 'remove').map((f) => f.path);
    for (const path of removed) await this.fs.remove(plan.dir, path);
    const ours = new Set(plan.manifest?.dirs ?? []);
    const needed = new Set(plan.planned.flatMap((f) => parentDirs(f.path)));
    const emptied = [...new Set(removed.flatMap(parentDirs))].filter((d) => ours.has(d) && !needed.has(d));
    // Deepest first, so a directory's subdirectories are gone before it is tried.
    emptied.sort((a, b) => b.split('/').length - a.split('/').length);
    const gone: string[] = [];
    for (const dir of emptied) if (await this.fs.removeEmptyDir(plan.dir, dir)) gone.push(dir);
    return gone;
  }

  private async plan(id: string, req: ApplyRequest): Promise<Plan> {
    const { doc, lint } = await this.profiles.forApply(id);
    const dir = await this.fs.targetDir(await this.targetDir(id, doc, req));
    const { runtime, source } = this.runtime(doc, req, dir);
    const { emitted, errors } = await this.emit(id, doc, lint, runtime, dir);
    const own = await this.fs.read(dir, manifestPath(id, runtime));
    const { manifest, legacy } = selectManifest(runtime, own, own === null ? await this.fs.read(dir, legacyManifestPath(id)) : null);
    const existing = new Map<string, string | null>();
    for (const path of [...emitted.files.map((f) => f.path), ...withdrawnCandidates(emitted.files, manifest)]) {
      existing.set(path, await this.fs.read(dir, path));
    }
    const planned = planFiles(emitted.files, existing, manifest, id);
    return {
      runtime,
      runtime_source: source,
      dir,
      planned,
      existing,
      withdrawn: planWithdrawn(emitted.files, existing, manifest),
      createdDirs: await this.missingDirs(dir, planned),
      manifest,
      legacyManifest: legacy,
      warnings: emitted.warnings,
      errors,
    };
  }

  /** The directories above the files to create that do not exist yet. */
  private async missingDirs(dir: string, planned: readonly PlannedFile[]): Promise<string[]> {
    const candidates = new Set(planned.filter((f) => f.action === 'create').flatMap((f) => parentDirs(f.path)));
    const missing: string[] = [];
    for (const d of candidates) if (!(await this.fs.exists(dir, d))) missing.push(d);
    return missing;
  }

  /**
   * The profile emitted for a runtime, without planning or writing anything: sessions write it to their own
   * directory. `projectDir` is where project-level skills are looked for. Errors are lint errors and missing skills.
   */
  async emission(id: string, runtime: EmitRuntime, projectDir: string): Promise<{ doc: ProfileDoc; emitted: EmitResult; errors: LintFinding[] }> {
    const { doc, lint } = await this.profiles.forApply(id);
    return { doc, ...(await this.emit(id, doc, lint, runtime, projectDir)) };
  }

  private async emit(id: string, doc: ProfileDoc, lint: LintResult, runtime: EmitRuntime, projectDir: string): Promise<{ emitted: EmitResult; errors: LintFinding[] }> {
    const { skills, errors: skillErrors } = runtime === 'claude-code' ? await this.skills(doc, projectDir) : { skills: [], errors: [] };
    const emitted = emitProfile(runtime, doc, { profileId: id, serviceUrl: this.env.serviceUrl(), skills });
    return { emitted, errors: [...lint.errors, ...skillErrors] };
  }

  /** The request's dir, else the profile's auto_apply_dir, else the one project bound to the profile. */
  private async targetDir(id: string, doc: ProfileDoc, req: ApplyRequest): Promise<string> {
    if (req.dir) return req.dir;
    if (doc.auto_apply_dir) return doc.auto_apply_dir;
    const bound = await this.profiles.boundProjects(id);
    if (bound.length === 1) return bound[0];
    throw new DomainError(
      'invalid_input',
      bound.length ? `dir: required (profile ${id} is bound to ${bound.length} projects)` : `dir: required (profile ${id} has no auto_apply_dir and no bound project)`,
    );
  }

  private runtime(doc: ProfileDoc, req: ApplyRequest, dir: string): { runtime: EmitRuntime; source: PreviewResult['runtime_source'] } {
    const named = req.runtime ?? doc.runtime;
    if (named !== 'auto') return { runtime: named, source: req.runtime ? 'requested' : 'profile' };
    const found = AGENT_RUNTIMES.find((a) => findExecutable(a.executable, this.env.pathEnv(), dir) !== null);
    const runtime = EMIT_RUNTIMES.find((r) => r === found?.name);
    if (!runtime) throw new DomainError('runtime_not_found', `runtime auto: none of ${AGENT_RUNTIMES.map((a) => a.executable).join(', ')} is on PATH; name a runtime`);
    return { runtime, source: 'auto' };
  }

  /** Local skills: explicit path (must hold SKILL.md), else ~/.claude/skills/<name>, else <project>/.claude/skills/<name>. */
  private async skills(doc: ProfileDoc, project: string): Promise<{ skills: SkillFiles[]; errors: LintFinding[] }> {
    const skills: SkillFiles[] = [];
    const errors: LintFinding[] = [];
    for (const [i, skill] of doc.skills.entries()) {
      if (skill.source !== 'local') continue;
      const candidates = skill.path
        ? [this.profiles.skillDir(doc, skill.path)]
        : [join(this.env.home(), '.claude/skills', skill.name), join(project, '.claude/skills', skill.name)];
      let files: SkillFiles['files'] | null = null;
      for (const dir of candidates) if (!files) files = await this.fs.readSkill(dir);
      if (files) skills.push({ name: skill.name, files });
      else errors.push({ path: `skills[${i}]`, code: 'skill_missing_file', message: `skill ${skill.name}: no SKILL.md in ${candidates.join(' or ')}` });
    }
    return { skills, errors };
  }

  private async journal(
    id: string,
    trigger: ApplyTrigger,
    dir: string,
    runtime: string,
    result: { ok: boolean; files: ApplyResult['files']; error: string | null },
  ): Promise<void> {
    await this.profiles.recordApply(id, { trigger, dir, runtime, ...result });
  }
}
