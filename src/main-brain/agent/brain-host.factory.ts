import { limitSettings } from '../../sessions/session-limit.model';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { inheritedEnv } from '../../auth/child-env';
import { Credentials } from '../../auth/credentials';
import { EventBus } from '../../bus/event-bus';
import { ConfigError } from '../../config/config.loader';
import { BrainstemConfig } from '../../config/config.schema';
import { ServiceUrl } from '../../config/service-url';
import { Journal } from '../../journal/journal.port';
import { claudeModel, claudeSystemPrompt } from '../../profiles/emitters/claude-code.emitter';
import { TOKEN_ENV, denyRules } from '../../profiles/emitters/emitter-support';
import { ProfileDoc } from '../../profiles/profile.schema';
import { ProfilesService } from '../../profiles/profiles.service';
import { Pending } from '../../sessions/session.events';
import { ProcessRunner } from '../../sessions/runtimes/process-runner';
import { SessionsService } from '../../sessions/sessions.service';
import { SupervisionService } from '../../supervision/supervision.service';
import { ChatService } from '../chat.service';
import { ConfirmationsService } from '../confirmations.service';
import { BrainAgent, BrainLaunch } from './brain-agent.port';
import { BRAIN_PERMISSION, BrainHost } from './brain-host';
import { ClaudeBrainAgent } from './claude-brain.agent';
import { PerTurnBrainAgent } from './per-turn-brain.agent';
import { codexBrain, geminiBrain, opencodeBrain } from './per-turn-brain.runtimes';
import { BrainSpending, BrainUsageFacts } from './brain-spending';

export interface BrainHostDeps {
  config: BrainstemConfig;
  runtime: string;
  bus: EventBus;
  journal: Journal;
  chat: ChatService;
  supervision: SupervisionService;
  sessions: SessionsService;
  profiles: ProfilesService;
  confirmations: ConfirmationsService;
  /** The usage projection: what the brain and everything spent today. */
  usage: BrainUsageFacts;
  credentials: Credentials;
  url: ServiceUrl;
  runner: ProcessRunner;
  /** The service's environment, which the brain's runtime inherits (without credentials). */
  env: Readonly<Record<string, string | undefined>>;
  now: () => number;
  newId: () => string;
}

/** How many open sessions a new conversation's summary lists. */
const SUMMARY_SESSIONS = 50;

/** The hosted brain's profile, which must exist and lint clean: a brain configured wrong does not start. */
async function brainProfile(profiles: ProfilesService, id: string): Promise<ProfileDoc> {
  let found: Awaited<ReturnType<ProfilesService['forApply']>>;
  try {
    found = await profiles.forApply(id);
  } catch (e) {
    throw new ConfigError([`BRAINSTEM_MAIN_BRAIN_PROFILE: no profile ${JSON.stringify(id)} (${e instanceof Error ? e.message : String(e)})`]);
  }
  if (!found.lint.valid) {
    throw new ConfigError([`BRAINSTEM_MAIN_BRAIN_PROFILE: profile ${id} has errors: ${found.lint.errors.map((f) => `${f.path || '(profile)'}: ${f.message}`).join('; ')}`]);
  }
  return found.doc;
}

function brainAgent(runtime: string, runner: ProcessRunner, launch: () => BrainLaunch): BrainAgent {
  switch (runtime) {
    case 'claude-code':
      return new ClaudeBrainAgent(runner, launch);
    case 'codex':
      return new PerTurnBrainAgent(codexBrain, launch, runner);
    case 'gemini-cli':
      return new PerTurnBrainAgent(geminiBrain, launch, runner);
    case 'opencode':
      return new PerTurnBrainAgent(opencodeBrain, launch, runner);
    default:
      throw new ConfigError([`BRAINSTEM_MAIN_BRAIN_RUNTIME=${runtime}: not a runtime that can host the brain`]);
  }
}

/** Builds the hosted brain: its profile, its own directory and credential, its runtime. */
export async function createBrainHost(d: BrainHostDeps): Promise<BrainHost> {
  const doc = await brainProfile(d.profiles, d.config.main_brain.profile);
  // Its own directory, the same across restarts: claude keeps its conversations per directory.
  const cwd = join(d.config.journal.dir, 'main-brain');
  mkdirSync(cwd, { recursive: true, mode: 0o700 });
  // Its directory sits in the journal's, beside the user's token: denied by absolute path (claude's `//` prefix).
  const deny = [...denyRules(doc), ...d.credentials.secretFiles().map((path) => `Read(/${path})`)];
  const launch = (): BrainLaunch => ({
    cwd,
    // The brain's own credential, never the user's; Brainstem tools loaded up front, not deferred behind a search.
    env: { ...inheritedEnv(d.env), BRAINSTEM_URL: d.url.get(), [TOKEN_ENV]: d.credentials.brainToken(), ENABLE_TOOL_SEARCH: 'false' },
    mcp_url: `${d.url.get()}/mcp`,
    instructions: claudeSystemPrompt(doc),
    model: claudeModel(doc) ?? null,
    profile_args: d.runtime === 'claude-code' ? [...(deny.length ? ['--disallowedTools', ...deny] : []), '--permission-mode', doc.permissions.mode] : [],
  });
  const host = new BrainHost(
    d.bus,
    d.journal,
    d.chat,
    brainAgent(d.runtime, d.runner, launch),
    {
      goal: () => d.supervision.status().autonomous?.task_hint || null,
      openSessions: () =>
        d.sessions
          .activeFirst(SUMMARY_SESSIONS)
          .sessions.filter((s) => s.state !== 'exited')
          .map((s) => ({ id: s.id, alias: s.alias, title: s.title || null, state: s.state, runtime: s.runtime, waits_on: waitsOn(s.pending) })),
      pendingConfirmations: () => d.confirmations.list('pending').map((c) => ({ id: c.id, tool: c.tool, description: c.description })),
      roundPrompt: (id) => d.supervision.findRound(id)?.prompt ?? null,
    },
    (call) => d.confirmations.request(call),
    {
      restore_ttl_ms: d.config.supervision.restore_ttl_s * 1000,
      context_budget: d.config.main_brain.context_budget_tokens,
      fence: () => d.supervision.fence(),
      spending: new BrainSpending(d.usage, { brain_usd_per_day: d.config.main_brain.budget_usd, usd_per_day: d.config.budget.usd_per_day, prices: d.config.prices }),
      limits: limitSettings(d.config.limits),
      jitter: Math.random,
    },
    d.now,
    d.newId,
    d.url.listening,
  );
  d.confirmations.runWith(BRAIN_PERMISSION, (args) => host.allowPermission(args));
  return host;
}

/** What a session waits on, in a line for the kept summary: its question, its permission request (id, tool, input) or its block. */
function waitsOn(pending: Pending | null): string | null {
  if (!pending) return null;
  if (pending.kind === 'question') return `question: ${pending.question}`;
  if (pending.kind === 'permission') return `permission ${pending.request_id}: ${pending.tool} ${JSON.stringify(pending.input)}`;
  return `blocked: ${pending.reason}`;
}
