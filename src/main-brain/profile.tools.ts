import { IsBoolean, IsIn, IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { DomainError } from '../common/domain-error';
import { Describe } from '../common/dto-schema';
import { PathField } from '../common/path-field';
import { canonicalJson } from '../journal/canonical-json';
import { ProfileApplier } from '../profiles/apply/profile-applier';
import { APPLY_RUNTIMES, ApplyRuntime, ProfileId } from '../profiles/profile.dto';
import { HOOK_EVENTS, IsProfileName, ProfileDoc } from '../profiles/profile.schema';
import { budgetLoosened } from '../profiles/profile-budget.schema';
import { sandboxLoosened } from '../profiles/profile-sandbox';
import { dumpProfileYaml } from '../profiles/profile.yaml';
import { ProfileItem, ProfileView, ProfilesService, SaveCheck, SavedProfile } from '../profiles/profiles.service';
import { readScanFiles, scanProfile } from '../profiles/scan';
import { BUILTIN_TEMPLATES } from '../profiles/templates';
import { generateProfile } from './profile-generator';
import { ToolRegistry } from './tool-registry';

export type ProfileAction = 'list' | 'read' | 'create' | 'update' | 'delete' | 'apply' | 'search' | 'generate' | 'remember' | 'scan';

type Field = 'profile_id' | 'profile' | 'dir' | 'runtime' | 'force' | 'preview' | 'query' | 'description' | 'name' | 'save' | 'text' | 'glob' | 'import';

/**
 * Which fields each action needs and accepts. One flat JSON schema keeps the tool readable to an agent;
 * this table then refuses fields an action would silently ignore.
 */
const ACTION_FIELDS: Readonly<Record<ProfileAction, { required: readonly Field[]; optional: readonly Field[] }>> = {
  list: { required: [], optional: [] },
  read: { required: ['profile_id'], optional: [] },
  create: { required: ['profile'], optional: [] },
  update: { required: ['profile_id', 'profile'], optional: [] },
  delete: { required: ['profile_id'], optional: [] },
  apply: { required: ['profile_id'], optional: ['dir', 'runtime', 'force', 'preview'] },
  search: { required: ['query'], optional: [] },
  generate: { required: ['description'], optional: ['name', 'save'] },
  remember: { required: ['profile_id', 'text'], optional: ['glob'] },
  scan: { required: ['dir'], optional: ['runtime', 'import'] },
};
const ACTIONS = Object.keys(ACTION_FIELDS) as ProfileAction[];

/** One flat set of fields for every action; which an action needs and accepts is ACTION_FIELDS'. */
class ProfileToolArgs {
  @IsIn(ACTIONS) action!: ProfileAction;
  @IsOptional() @ProfileId() @Describe('The profile id (a slug).') profile_id?: string;
  @IsOptional() @IsObject() @Describe('create: the profile document; update: the fields to change.') profile?: Record<string, unknown>;
  @IsOptional() @PathField() @Describe('apply: the project directory to write into; scan: the absolute project directory to read.') dir?: string;
  @IsOptional()
  @IsIn(APPLY_RUNTIMES)
  @Describe("apply: the runtime to emit for (default: the profile's); scan: the runtime whose files to read (default: detected).")
  runtime?: ApplyRuntime;
  @IsOptional() @IsBoolean() @Describe('apply: overwrite files edited by hand since the last apply.') force?: boolean;
  @IsOptional() @IsBoolean() @Describe('apply: true shows the files and warnings without writing.') preview?: boolean;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(1000) query?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(2000) @Describe('generate: what the agent should do, in plain language.') description?: string;
  @IsOptional() @IsProfileName() @Describe('generate: the display name (default: from the description).') name?: string;
  @IsOptional() @IsBoolean() @Describe('generate: false returns the draft without saving it (default true).') save?: boolean;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(20000) @Describe('remember: the rule or instruction.') text?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(1000) @Describe('remember: limit the rule to matching paths.') glob?: string;
  @IsOptional() @IsBoolean() @Describe('scan: true saves the proposed profile (default false: only proposes).') import?: boolean;
}
const FIELDS: readonly Field[] = ['profile_id', 'profile', 'dir', 'runtime', 'force', 'preview', 'query', 'description', 'name', 'save', 'text', 'glob', 'import'];

function checkFields(args: ProfileToolArgs): void {
  const { required, optional } = ACTION_FIELDS[args.action];
  const missing = required.filter((f) => args[f] === undefined);
  const extra = FIELDS.filter((f) => args[f] !== undefined && !required.includes(f) && !optional.includes(f));
  const problems = [...missing.map((f) => `${f}: is required for action ${args.action}`), ...extra.map((f) => `${f}: not used by action ${args.action}`)];
  if (problems.length) throw new DomainError('invalid_input', `manage_agent_profile: ${problems.join('; ')}`);
}

function summary(p: ProfileItem) {
  if (p.error !== null) return { id: p.id, name: null, source: p.source, locked: p.locked, is_default: p.is_default, error: p.error };
  return { id: p.id, name: p.name, description: p.description, target_runtime: p.target_runtime, source: p.source, locked: p.locked, is_default: p.is_default };
}

/** Where every query term occurs, over the search fields: name, description, instructions. */
function searchFields(p: ProfileView, terms: string[]): string[] | null {
  const fields: Record<'name' | 'description' | 'instructions', string> = {
    name: p.name,
    description: p.description,
    instructions: [p.instructions.system_prompt ?? '', ...(p.instructions.rules ?? []).map((r) => `${r.glob} ${r.instruction}`)].join('\n'),
  };
  const lower = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.toLowerCase()]));
  if (!terms.every((t) => Object.values(lower).some((v) => v.includes(t)))) return null;
  return Object.keys(lower).filter((k) => terms.some((t) => lower[k].includes(t)));
}

/** A rule for some paths becomes a path rule; a general one is appended to the system prompt's remembered list. */
function remembered(p: ProfileView, text: string, glob: string | undefined): Record<string, unknown> {
  if (glob !== undefined) return { instructions: { rules: [...(p.instructions.rules ?? []), { glob, instruction: text }] } };
  const prompt = p.instructions.system_prompt ?? '';
  const heading = 'Remembered rules:';
  const next = prompt.includes(heading) ? `${prompt.trimEnd()}\n- ${text}` : `${prompt.trimEnd()}${prompt.trim() ? '\n\n' : ''}${heading}\n- ${text}`;
  return { instructions: { system_prompt: next } };
}

/** Something in a profile that starts a process once the profile is applied or a session uses it. */
interface Runs {
  /** Where it is in the document. */
  path: string;
  /** What it runs, from where and when: equal keys run the same thing. */
  key: string;
  what: string;
}

/** Command hooks and MCP servers started by a command (stdio; the emitters write an http server's url only). */
function whatRuns(doc: Pick<ProfileDoc, 'hooks' | 'tools'>): Runs[] {
  const runs: Runs[] = [];
  for (const event of HOOK_EVENTS) {
    (doc.hooks[event] ?? []).forEach((h, i) => {
      if (h.type !== 'command') return;
      runs.push({ path: `hooks.${event}[${i}]`, key: canonicalJson(['hook', event, h.command ?? '', h.matcher ?? null, h.timeout]), what: `a command hook (runs ${JSON.stringify(h.command ?? '')})` });
    });
  }
  for (const [name, s] of Object.entries(doc.tools.mcp_servers ?? {})) {
    if (s.type !== 'stdio') continue;
    const command = [s.command ?? '', ...(s.args ?? [])].join(' ');
    runs.push({ path: `tools.mcp_servers.${name}`, key: canonicalJson(['mcp', name, s.command ?? '', s.args ?? [], s.env ?? {}]), what: `an MCP server that starts a command (runs ${JSON.stringify(command)})` });
  }
  return runs;
}

/**
 * What a save by the main brain would do that only the user may allow (none: it saves). It must not loosen the
 * permissions it works under: only a personal profile may bypass permissions, so making one personal, setting
 * bypassPermissions, or changing a profile that bypasses (a hook, a dir, all running with every permission) is the
 * user's. Nor may it widen what runs: a command hook, an MCP server started by a command, or an auto_apply_dir (every
 * later save writes the profile's hooks there) that the profile did not hold already, the same. What the user put there
 * may stay, and removing it widens nothing. A new profile has nothing already, so any of them is the user's. Nor may it
 * raise or remove a budget: what the workers may spend is the user's to widen. Nor widen the sandbox its workers run in.
 */
function userOnlySave(before: Parameters<SaveCheck>[0], after: Parameters<SaveCheck>[1]): string[] {
  if (before?.doc.permissions.mode === 'bypassPermissions') return [`change profile ${before.id}, which bypasses permissions`];
  const problems: string[] = [];
  if (after.scope === 'personal' && before?.scope !== 'personal') problems.push('profile.scope: make the profile personal');
  if (after.doc.permissions.mode === 'bypassPermissions') problems.push('profile.permissions.mode: set bypassPermissions');
  const had = new Set(before ? whatRuns(before.doc).map((r) => r.key) : []);
  for (const r of whatRuns(after.doc)) if (!had.has(r.key)) problems.push(`profile.${r.path}: add or change ${r.what}`);
  const dir = after.doc.auto_apply_dir;
  if (dir && dir !== before?.doc.auto_apply_dir) problems.push(`profile.auto_apply_dir: set it to ${JSON.stringify(dir)} (every later save writes the profile's files there)`);
  problems.push(...budgetLoosened(before?.doc.budget, after.doc.budget));
  // What a built-in template's sandbox allows, any session may have already by using that template.
  problems.push(...sandboxLoosened(before?.doc, after.doc, BUILTIN_TEMPLATES.map((t) => t.doc)));
  return problems;
}

/**
 * What applying a profile does that only the user may allow: applying writes its hooks and MCP servers into a project,
 * where they run, so a profile that holds any is the user's to apply, as one that bypasses permissions is.
 */
function userOnlyApply(p: ProfileItem): string[] {
  if (p.error !== null) return [];
  return [...(p.permissions.mode === 'bypassPermissions' ? ['it bypasses permissions'] : []), ...whatRuns(p).map((r) => `${r.path} will run: ${r.what}`)];
}

function needsUser(problems: string[]): DomainError {
  // Reached only when the profile changed between the gate and the save: asking again asks the user about what is there now.
  return new DomainError('permission_denied', `manage_agent_profile: only the user can allow this (${problems.join('; ')}); call again to ask the user`);
}

const brainSave: SaveCheck = (before, after) => {
  const problems = userOnlySave(before, after);
  if (problems.length) throw needsUser(problems);
};

/** A save's answer for the brain: the profile, and beside it what the save could not do (a failed auto-apply). */
function saved({ warnings, ...profile }: SavedProfile): { profile: ProfileView; warnings: SavedProfile['warnings'] } {
  return { profile, warnings };
}

async function validProfile(profiles: ProfilesService, id: string): Promise<ProfileView> {
  const p = await profiles.get(id);
  if (p.error !== null) throw new DomainError('profile_malformed', `profile ${id} is malformed: ${p.error}`);
  return p;
}

/** The call's work; `check` judges its saves (none: the user's), `human` skips the brain's apply rules. */
async function run(profiles: ProfilesService, applier: ProfileApplier, a: ProfileToolArgs, check: SaveCheck | undefined, human: boolean): Promise<unknown> {
  checkFields(a);
  switch (a.action) {
    case 'list': {
      const { profiles: all, default_profile_id } = await profiles.list();
      return { profiles: all.map(summary), default_profile_id };
    }
    case 'read':
      return { profile: await profiles.get(a.profile_id as string), lint: await profiles.lint(a.profile_id as string) };
    case 'create':
      return saved(await profiles.create(a.profile as Record<string, unknown>, check));
    case 'update':
      return saved(await profiles.update(a.profile_id as string, a.profile as Record<string, unknown>, check));
    case 'delete':
      await profiles.remove(a.profile_id as string);
      return { deleted: a.profile_id };
    case 'apply': {
      const target = { ...(a.dir !== undefined ? { dir: a.dir } : {}), ...(a.runtime !== undefined ? { runtime: a.runtime } : {}) };
      if (a.preview) {
        if (a.force !== undefined) throw new DomainError('invalid_input', 'manage_agent_profile: force: not used with preview');
        return { preview: await applier.preview(a.profile_id as string, target) };
      }
      const problems = human ? [] : userOnlyApply(await profiles.get(a.profile_id as string));
      if (problems.length) throw needsUser(problems);
      return { applied: await applier.apply(a.profile_id as string, { ...target, ...(a.force !== undefined ? { force: a.force } : {}) }) };
    }
    case 'search': {
      const terms = (a.query as string).toLowerCase().split(/\s+/).filter(Boolean);
      const valid = (await profiles.list()).profiles.filter((p): p is ProfileView => p.error === null);
      const matches = valid.flatMap((p) => {
        const where = searchFields(p, terms);
        return where ? [{ ...summary(p), matched_in: where }] : [];
      });
      return { query: a.query, matches };
    }
    case 'generate': {
      const generated = generateProfile(a.description as string, a.name);
      if (a.save === false) return { saved: false, template_id: generated.template_id, matched_keywords: generated.matched_keywords, profile: generated.profile };
      const created = saved(await profiles.create(generated.profile, check));
      return { saved: true, template_id: generated.template_id, matched_keywords: generated.matched_keywords, ...created };
    }
    case 'remember': {
      const current = await validProfile(profiles, a.profile_id as string);
      return saved(await profiles.update(current.id, remembered(current, a.text as string, a.glob), check));
    }
    case 'scan':
      return scan(profiles, a, check);
  }
}

/**
 * Reads the project's runtime files and proposes the profile that emits them. The proposal is in API names, so it
 * can be passed to create as is; `profile_id` is the id the files were written under (apply under it to get the
 * same paths). Import goes through the YAML import, which gives a fresh name and id when they are taken.
 */
async function scan(profiles: ProfilesService, a: ProfileToolArgs, check: SaveCheck | undefined): Promise<unknown> {
  const dir = a.dir as string;
  const read = await readScanFiles(dir);
  const result = scanProfile(read.files, a.runtime, { projectDir: dir });
  const { runtime: target_runtime, ...doc } = result.profile;
  const proposal = { runtime: result.runtime, profile_id: result.profileId, profile: { ...doc, target_runtime }, files_read: result.filesUsed, warnings: [...read.warnings, ...result.warnings] };
  if (!a.import) return { saved: false, ...proposal };
  const imported = await profiles.importYaml(dumpProfileYaml(result.profile), check);
  return { saved: true, ...proposal, profile_id: imported.profile.id, profile: imported.profile, import_warnings: imported.warnings, lint: imported.lint };
}

const SAVES: ReadonlySet<ProfileAction> = new Set(['create', 'update', 'remember', 'generate', 'scan']);

/** Ends a save at its check, before anything is written: the gate only wants what the check sees. */
class Probed extends Error {}

/** The save the call would make, judged as the brain's: what of it only the user may allow, and the profile it saves. */
async function probeSave(profiles: ProfilesService, applier: ProfileApplier, a: ProfileToolArgs): Promise<{ problems: string[]; name: string } | null> {
  let seen: { problems: string[]; name: string } | null = null;
  const probe: SaveCheck = (before, after) => {
    seen = { problems: userOnlySave(before, after), name: after.doc.name };
    throw new Probed();
  };
  try {
    await run(profiles, applier, a, probe, false);
  } catch (e) {
    if (!(e instanceof Probed)) throw e;
  }
  return seen;
}

/**
 * The human gate of manage_agent_profile: what the call will do when only the user may allow it (null: it runs).
 * Deleting, applying with force, and what the brain's rules above reserve to the user wait for the user's confirmation.
 */
async function profileGate(profiles: ProfilesService, applier: ProfileApplier, a: ProfileToolArgs): Promise<string | null> {
  checkFields(a);
  if (a.action === 'delete') {
    const p = await profiles.get(a.profile_id as string);
    // A built-in cannot be deleted: the call answers why, with nothing to confirm.
    if (p.locked) return null;
    return `Delete the Agent Profile ${p.id}${p.name ? ` (${JSON.stringify(p.name)})` : ''}: its file is removed, and it stops being the default or bound to any project.`;
  }
  if (a.action === 'apply' && !a.preview) {
    const problems = [...(a.force ? ['files edited by hand since the last apply are overwritten'] : []), ...userOnlyApply(await profiles.get(a.profile_id as string))];
    if (!problems.length) return null;
    const where = a.dir !== undefined ? JSON.stringify(a.dir) : "its auto_apply_dir or bound project";
    return `Apply the Agent Profile ${a.profile_id} to ${where}${a.runtime ? ` for ${a.runtime}` : ''}, writing its runtime config files: ${problems.join('; ')}.`;
  }
  if (!SAVES.has(a.action) || (a.action === 'generate' && a.save === false) || (a.action === 'scan' && !a.import)) return null;
  const save = await probeSave(profiles, applier, a);
  if (!save || !save.problems.length) return null;
  const which = a.action === 'update' || a.action === 'remember' ? `the Agent Profile ${a.profile_id}` : `a new Agent Profile ${JSON.stringify(save.name)}`;
  return `Save ${which} (${a.action}) with what only the user may allow: ${save.problems.join('; ')}.`;
}

/** The main brain's manage_agent_profile: the actions of docs/architecture/decisions.md#tools over the same ProfilesService as the REST API. */
export function registerProfileTools(registry: ToolRegistry, profiles: ProfilesService, applier: ProfileApplier): void {
  registry.register<ProfileToolArgs>({
    name: 'manage_agent_profile',
    audience: 'main_brain',
    description:
      'Manage Agent Profiles. Delete, apply with force, scope personal, permissions.mode bypassPermissions, changing or applying a profile that bypasses ' +
      'permissions, adding or changing command hooks, MCP servers started by a command (stdio) or auto_apply_dir, and applying a profile ' +
      'that has command hooks or stdio MCP servers, and raising or removing a budget need the user: such a call runs nothing and answers waiting_for_user until the user confirms it. action list; read {profile_id}; create {profile} (the profile document, runtime as target_runtime); ' +
      'update {profile_id, profile} (a partial document: objects merge, arrays replace); delete {profile_id}; ' +
      'apply {profile_id, dir?, runtime?, force?, preview?} (writes the runtime config files into dir, default the auto_apply_dir or bound project; ' +
      'preview:true only shows the files; force overwrites hand-edited files); ' +
      'search {query} (every word must occur in name, description or instructions); ' +
      'generate {description, name?, save?} (picks the closest built-in template by keywords and fills name, description and instructions; ' +
      'save:false only previews); remember {profile_id, text, glob?} (adds a rule: a path rule with glob, else a line in the system prompt); ' +
      'scan {dir, runtime?, import?} (reads the runtime files already in dir — .claude/settings.json, .claude/agents/*.md, .mcp.json, .claude/rules/*.md; ' +
      '.codex/config.toml, AGENTS.md; opencode.json, .opencode/agent/*.md; .gemini/settings.json, GEMINI.md — and proposes the profile that would produce them; ' +
      'runtime auto or absent detects it; ' +
      'import:true saves it, under a fresh name and id if taken). ' +
      'Built-in profiles are locked: duplicate them over REST to edit.',
    parameters: ProfileToolArgs,
    irreversible: (a) => profileGate(profiles, applier, a),
    handler: (a, ctx) => run(profiles, applier, a, ctx.human ? undefined : brainSave, ctx.human === true),
  });
}
