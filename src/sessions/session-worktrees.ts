import { Logger } from '@nestjs/common';
import { PeerClient, PeerRefused, PeerUnreachable } from '../cluster/peer-client';
import { DomainError } from '../common/domain-error';
import { DiffCursor, WorktreeDiff, encodeCursor } from '../worktrees/diff-page';
import { MergeStrategy, nothingToMerge } from '../worktrees/merge-plan';
import { WorktreeGit } from '../worktrees/worktree-git.port';
import { WORKTREE_ERRORS, WorktreeErrorCode, WorktreeRefusal } from '../worktrees/worktree.errors';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { SessionRegistry } from './session.registry';
import { SessionOutput } from './session-output';
import { reachableOwner } from './session-owner';
import { WorkerEnvironment } from './session-workers';
import { SessionWorktree, WorktreeOp } from './session-worktree';
import { WorktreeOpOutcome, decideWorktree } from './session-worktree.decider';
import { SessionWorktreeSetup } from './session-worktree-setup';

export interface SessionWorktreesOptions {
  /** How long a merged worktree is kept after its session exited (BRAINSTEM_RETENTION_S), before cleanup removes it. */
  retention_ms: number;
  /** How often cleanup looks. */
  sweep_ms: number;
  /** How long an operation taken here waits for the node that owns the session to perform it. */
  op_timeout_ms: number;
  now: () => number;
  newOpId: () => string;
}

/** A session's diff, as GET /coding-sessions/{id}/diff answers it. */
export type SessionDiff = { id: string; alias: string } & WorktreeDiff;

/** What GET …/diff asks, checked: a file normalized in the tree or none, a decoded cursor, a page's lines. */
export interface DiffQuery {
  file: string | null;
  cursor: DiffCursor;
  limit: number;
}

const isWorktreeCode = (code: string): code is WorktreeErrorCode => Object.hasOwn(WORKTREE_ERRORS, code);

/**
 * The refusals of a diff the owner gives, passed on as it gave them when their code has the same status here: the
 * worktree's state (not ready, deleted by hand, …), a session it does not know. Any other (its node credential refused,
 * a failure of its own) means it could not give the diff.
 */
const RELAYED = { ...WORKTREE_ERRORS, not_found: 404, invalid_input: 400 } as const;
const isRelayed = (code: string | null): code is keyof typeof RELAYED => code !== null && Object.hasOwn(RELAYED, code);

const diffUnavailable = (alias: string, owner: string, why: string) =>
  new DomainError('owner_unavailable', `the worktree of session ${alias} is on node ${owner}, which could not give its diff: ${why}`, { node: owner });

/** What a non-owner answers when asking the owner `owner` for the diff of session `alias` failed with `e`. */
export function ownerDiffError(e: unknown, alias: string, owner: string): unknown {
  if (e instanceof PeerRefused && isRelayed(e.code) && RELAYED[e.code] === e.status) return new DomainError(e.code, e.message, e.details ?? undefined);
  if (e instanceof PeerRefused) return diffUnavailable(alias, owner, `it answered ${e.status}${e.code === null ? '' : ` ${e.code}`}: ${e.message}`);
  if (e instanceof PeerUnreachable) return diffUnavailable(alias, owner, e.message);
  return e;
}

function refusalOf(e: unknown): WorktreeRefusal {
  if (e instanceof DomainError && isWorktreeCode(e.code)) return { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
  return { code: 'git_failed', message: e instanceof Error ? e.message : String(e) };
}

/**
 * Sessions' worktrees after their creation: prepared before the worker starts, diffed live, merged back, kept as a
 * branch or discarded, and cleaned up. Each operation goes through the command path (session-worktree.decider.ts):
 * journaled as requested, performed with git by the node that owns the session (the worktree is on its disk; another
 * node's request reaches it as a foreign event), its outcome journaled. At start: git's version is checked, worktrees
 * are pruned, folders deleted by hand reported, operations a restart cut short recorded as such.
 */
export class SessionWorktrees {
  private readonly logger = new Logger('worktrees');
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly git: WorktreeGit,
    readonly setup: SessionWorktreeSetup,
    private readonly environment: WorkerEnvironment,
    private readonly output: SessionOutput,
    private readonly peers: PeerClient,
    private readonly options: SessionWorktreesOptions,
  ) {}

  /** After the registry loaded, before the workers are recovered. */
  async start(): Promise<void> {
    const problem = await this.git.check();
    if (problem) this.logger.warn(`worktree isolation is unavailable: ${problem}`);
    this.registry.onForeignEvent((actor, event) => {
      if (event.type !== 'session.worktree_op_requested') return;
      actor.run(() => this.perform(actor)).catch((e: unknown) => this.logger.error(`session ${actor.id}: ${event.op} from another node not performed: ${(e as Error).message}`));
    });
    if (problem) return;
    const owned = this.registry.list().filter((a) => a.context.worktree && a.context.worktree.state !== 'removed' && this.registry.owns(a));
    for (const repo of new Set(owned.map((a) => a.context.worktree?.repo as string))) {
      await this.git.prune(repo).catch((e: unknown) => this.logger.warn(`git worktree prune in ${repo}: ${(e as Error).message}`));
    }
    for (const actor of owned) await actor.run(() => this.recover(actor)).catch((e: unknown) => this.logger.error(`session ${actor.id}: worktree not recovered: ${(e as Error).message}`));
    this.sweeper = setInterval(() => void this.sweep(), this.options.sweep_ms);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** An operation cut short, a preparation that never finished, a folder deleted by hand: each recorded as what it is. */
  private async recover(actor: SessionActor): Promise<void> {
    const w = actor.context.worktree;
    if (!w) return;
    if (w.pending_op) {
      const outcome = (await this.mergedMeanwhile(w)) ?? {
        ok: false,
        refusal: { code: 'worktree_op_interrupted', message: `the service stopped during the ${w.pending_op.op}; git left no half-done merge: look at the branch and try again` },
      };
      await this.commands.execute(actor, { type: 'record_worktree_op', op_id: w.pending_op.op_id, outcome });
    }
    if (w.state === 'preparing') await this.commands.execute(actor, { type: 'record_worktree_prepared', ok: false, reason: 'the service stopped while the worktree was prepared' });
    if (!(await this.git.exists(w.path))) await this.reportMissing(actor);
  }

  /**
   * A merge cut off by the service's death after git had finished it: its base holds the branch now (git answers
   * nothing to merge), so it is recorded as merged, into the base's commit now. The checkout is not said to be updated:
   * that cannot be known. Null for any other operation, or when git says otherwise (or cannot say).
   */
  private async mergedMeanwhile(w: SessionWorktree): Promise<WorktreeOpOutcome | null> {
    const op = w.pending_op;
    if (op?.op !== 'merge' || !w.base_branch) return null;
    const strategy = op.strategy ?? 'ff';
    try {
      const refusal = await this.git.mergeRefusal({ repo: w.repo, branch: w.branch, path: w.path, base_branch: w.base_branch, strategy, folder: false });
      const commit = refusal?.code === 'nothing_to_merge' ? await this.git.resolveCommit(w.repo, w.base_branch) : null;
      if (commit === null) return null;
      const step = strategy === 'rebase' ? 'rebase' : strategy === 'ff' ? 'fast_forward' : 'merge_commit';
      return { ok: true, merged: { strategy, step, into: w.base_branch, commit, checkout_updated: false } };
    } catch (e) {
      this.logger.warn(`the ${op.op} cut off at the restart could not be checked against git: ${(e as Error).message}`);
      return null;
    }
  }

  private async reportMissing(actor: SessionActor): Promise<void> {
    const w = actor.context.worktree;
    if (!w || w.state === 'missing' || w.state === 'removed') return;
    this.logger.warn(`session ${actor.id}: its worktree ${w.path} was deleted by hand; the branch ${w.branch} is kept`);
    await this.git.prune(w.repo).catch(() => undefined);
    await this.commands.execute(actor, { type: 'record_worktree_missing' });
  }

  /**
   * The worktree made ready off the creation's turn (checkout, copies, setup), then `launch` in the session's mailbox;
   * a preparation that failed fails the session, with the reason in its log and its worktree's state.
   */
  prepareAndLaunch(actor: SessionActor, launch: () => Promise<void>): Promise<void> {
    const log = (text: string) => this.output.write(actor, Buffer.from(`${text}\n`));
    return this.setup
      .prepare(actor, this.environment(actor.context), log, (chunk) => this.output.write(actor, chunk))
      .then((reason) =>
        actor.run(async () => {
          if (reason !== null) log(`brainstem: ${reason}`);
          await this.commands.execute(actor, { type: 'record_worktree_prepared', ok: reason === null, reason });
          // A stop during the preparation ended the session: no worker starts then.
          if (reason === null && actor.live) await launch();
        }),
      )
      .catch((e: unknown) => this.logger.error(`session ${actor.id}: worktree not prepared: ${(e as Error).message}`));
  }

  /**
   * Merge, branch-only or discard: journaled as requested, performed by the owner, answered with its outcome; a refusal
   * (a conflict, uncommitted changes) is thrown with its code and files.
   */
  async operate(idOrAlias: string, op: WorktreeOp, args: { strategy?: MergeStrategy; force?: boolean }, by: string): Promise<SessionActor> {
    const actor = await this.commands.commandable(idOrAlias);
    const refused = await this.refusal(actor, op, args);
    if (refused) throw refused;
    const op_id = this.options.newOpId();
    const strategy = op === 'merge' ? (args.strategy ?? 'ff') : null;
    await actor.run(() => this.commands.execute(actor, { type: 'request_worktree_op', op_id, op, strategy, force: args.force ?? false }, by));
    if (this.registry.owns(actor)) {
      await actor.run(() => this.perform(actor));
    } else {
      const done = await actor.until((a) => a.context.worktree?.last_op?.op_id === op_id, this.options.op_timeout_ms);
      if (!done) {
        throw new DomainError('worktree_op_timeout', `node ${this.registry.ownerOf(actor)} has not performed the ${op} of ${actor.context.alias} within ${this.options.op_timeout_ms / 1000} s; it is still requested (${op_id})`, {
          node: this.registry.ownerOf(actor),
          op_id,
        });
      }
    }
    const last = actor.context.worktree?.last_op;
    if (last && last.op_id === op_id && !last.ok) throw new DomainError(last.code, last.message, last.details ?? undefined);
    return actor;
  }

  /**
   * Why the operation would change nothing, asked before it is requested (and before the human gate asks the user): what
   * the request would be refused for, decided on the session's state as it stands; then, for a merge of a worktree on this
   * node's disk, what git refuses before trying anything (nothing to merge, no fast-forward, uncommitted changes). Null:
   * it would go ahead. Of another node's worktree, only nothing to merge is judged here (ahead 0 in the diff its owner
   * gives; an owner that cannot say leaves it to the owner, which judges the rest when it performs the merge).
   */
  async refusal(ref: string | SessionActor, op: WorktreeOp, args: { strategy?: MergeStrategy; force?: boolean }): Promise<DomainError | null> {
    const actor = typeof ref === 'string' ? this.registry.get(ref) : ref;
    const strategy = op === 'merge' ? (args.strategy ?? 'ff') : null;
    const decided = decideWorktree({ type: 'request_worktree_op', at: this.options.now(), op_id: 'check', op, strategy, force: args.force ?? false }, actor.snapshot);
    if ('error' in decided) return new DomainError(decided.error.code, decided.error.message, decided.error.details);
    const w = actor.context.worktree;
    if (op !== 'merge' || !w || w.base_branch === null) return null;
    if (!this.registry.owns(actor)) {
      const ahead = await this.ownerDiff(actor, { file: null, cursor: { file: 0, line: 0 }, limit: 1 }).then(
        (d) => d.ahead,
        () => null,
      );
      if (ahead !== 0) return null;
      const refusal = nothingToMerge({ branch: w.branch, base: w.base_branch });
      return new DomainError(refusal.code, refusal.message, refusal.details);
    }
    const folder = await this.git.exists(w.path);
    const refusal = await this.git.mergeRefusal({ repo: w.repo, branch: w.branch, path: w.path, base_branch: w.base_branch, strategy: strategy ?? 'ff', folder });
    return refusal && new DomainError(refusal.code, refusal.message, refusal.details);
  }

  /** The requested operation, carried out with git here (the owner), its outcome journaled. Runs in the session's mailbox. */
  private async perform(actor: SessionActor): Promise<void> {
    const w = actor.context.worktree;
    const op = w?.pending_op;
    if (!w || !op) return;
    let outcome: WorktreeOpOutcome;
    try {
      const folder = await this.git.exists(w.path);
      const at = { repo: w.repo, branch: w.branch, path: w.path };
      if (op.op === 'merge') {
        const strategy = op.strategy ?? 'ff';
        const r = await this.git.merge({ ...at, base_branch: w.base_branch as string, strategy, alias: actor.context.alias, op_id: op.op_id, folder, scratch: this.setup.folderOf(w.repo) });
        outcome = r.ok ? { ok: true, merged: { strategy, step: r.step, into: r.into, commit: r.commit, checkout_updated: r.checkout_updated } } : r;
      } else {
        // A discard deletes the branch only if Brainstem made it: a reused branch is the user's.
        const branch_delete = op.op === 'discard' && w.reused === 'none' ? 'force' : 'keep';
        const r = await this.git.remove({ ...at, branch_delete, force: op.force });
        outcome = r.ok ? { ok: true, removed: { branch_kept: r.branch_kept } } : r;
      }
    } catch (e) {
      outcome = { ok: false, refusal: refusalOf(e) };
    }
    await this.commands.execute(actor, { type: 'record_worktree_op', op_id: op.op_id, outcome });
  }

  /** The session's diff now: the owner takes it from the worktree on its disk, any other node asks the owner for it. */
  async diff(idOrAlias: string, query: DiffQuery): Promise<SessionDiff> {
    const actor = this.registry.get(idOrAlias);
    const { alias } = actor.context;
    const w = actor.context.worktree;
    if (!w) throw new DomainError('no_worktree', `session ${alias} has no worktree: it was started without isolation "worktree"`);
    if (w.state === 'removed') throw new DomainError('worktree_removed', `the worktree of ${alias} was removed (${w.removed?.reason}); its branch ${w.branch}${w.removed?.branch_kept ? ' is kept' : ' is gone'}`);
    if (!this.registry.owns(actor)) return this.ownerDiff(actor, query);
    if (w.state === 'preparing') throw new DomainError('worktree_not_ready', `the worktree of ${alias} is still being prepared`);
    if (!(await this.git.exists(w.path))) {
      await actor.run(() => this.reportMissing(actor));
      throw new DomainError('worktree_missing', `the worktree of ${alias} (${w.path}) was deleted by hand; its branch ${w.branch} is kept`, { path: w.path, branch: w.branch });
    }
    const diff = await this.git.diff({ path: w.path, branch: w.branch, base_ref: w.base_ref, base_branch: w.base_branch, base_sha: w.base_sha, ...query });
    return { id: actor.id, alias, ...diff };
  }

  /**
   * Another node's session: the same route of its owner, the same query, with this node's credential; the owner's
   * answer, or its refusal as it gave it. An owner down or not answering is a 503 owner_unavailable naming it. The owner
   * answers from its own disk and never forwards again: a session's owner is fixed by its session.created.
   */
  private async ownerDiff(actor: SessionActor, query: DiffQuery): Promise<SessionDiff> {
    const owner = await reachableOwner(this.registry, actor, 'its worktree is there');
    const params = new URLSearchParams({ ...(query.file === null ? {} : { file: query.file }), cursor: encodeCursor(query.cursor), limit: String(query.limit) });
    let body: unknown;
    try {
      body = await this.peers.getJson(owner, `/coding-sessions/${encodeURIComponent(actor.id)}/diff?${params.toString()}`);
    } catch (e) {
      throw ownerDiffError(e, actor.context.alias, owner);
    }
    const answered = typeof body === 'object' && body !== null ? (body as Partial<SessionDiff>) : null;
    if (answered?.id !== actor.id || !Array.isArray(answered.files)) throw diffUnavailable(actor.context.alias, owner, 'it answered no diff of that session');
    return answered as SessionDiff;
  }

  /**
   * Merged worktrees of exited sessions, once retention has passed since the later of the merge and the exit: removed
   * with their (merged) branch, never with uncommitted changes (those are recorded, and the worktree kept).
   */
  async sweep(): Promise<void> {
    const now = this.options.now();
    for (const actor of this.registry.list()) {
      const w = actor.context.worktree;
      if (!w || !w.merged || w.pending_op || w.state === 'removed' || w.state === 'preparing' || actor.live || !this.registry.owns(actor)) continue;
      if (now < Math.max(w.merged.at, actor.context.state_since) + this.options.retention_ms) continue;
      await actor
        .run(async () => {
          const r = await this.git.remove({ repo: w.repo, path: w.path, branch: w.branch, branch_delete: w.reused === 'none' ? 'merged' : 'keep', force: false });
          const outcome = r.ok ? { removed: true as const, branch_kept: r.branch_kept } : { blocked: (r.refusal.details?.files as string[] | undefined) ?? [] };
          await this.commands.execute(actor, { type: 'record_worktree_cleanup', outcome });
        })
        .catch((e: unknown) => this.logger.warn(`session ${actor.id}: worktree cleanup failed: ${(e as Error).message}`));
    }
  }
}
