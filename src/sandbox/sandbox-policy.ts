import { isAbsolute, join, resolve } from 'node:path';

/**
 * What one sandboxed worker may do, as srt applies it (docs/operations/security.md): absolute paths only, so the
 * policy means the same wherever it is read. Journaled with the session (session.created), so a worker resumed after a
 * restart runs under the policy it started with.
 */
export interface SandboxPolicy {
  /** Folders and files it may write: its cwd or worktree, its temp dir, its runtime's state, the profile's allow_write. */
  allow_write: string[];
  /** Never written, even inside allow_write: the settings through which it would widen its own permissions. */
  deny_write: string[];
  /** Hidden: credentials, Brainstem's data directory, the other sessions' worktrees, the profile's deny_read. */
  deny_read: string[];
  /** Read back inside a hidden folder: its own worktree and the session's config files (both under the data directory). */
  allow_read: string[];
  /** srt's domain grammar; deny always wins. A host neither lists is asked (a `Network` permission request). */
  network: { allow: string[]; deny: string[] };
  /**
   * Loopback ports of allowed hosts (Brainstem's own, a model API's base URL, the profile's `127.0.0.1:5432`), forwarded
   * inside the sandbox through srt's proxy: the sandbox has a loopback of its own, so BRAINSTEM_URL and a local model
   * API would reach nothing there.
   */
  loopback_ports: number[];
  /** The worker's own temp dir (TMPDIR), made by the launcher. */
  tmp_dir: string;
  /** Folders the launcher makes before the worker starts: srt cannot let a worker write a folder that is not there. */
  make_dirs: string[];
}

/** The profile's `sandbox` section, as far as the policy reads it. */
export interface PolicyProfileSandbox {
  allow_write: readonly string[];
  deny_read: readonly string[];
  network: { allow: readonly string[]; deny: readonly string[] };
}

/** Everything a session's policy is made from: facts only, read by the caller. */
export interface SandboxFacts {
  session_id: string;
  runtime: string;
  /** The directory the worker runs in (its worktree, with isolation `worktree`). */
  cwd: string;
  /** The worker's home (its HOME, else the service's): its runtime keeps its state there. */
  home: string;
  /** The service's own home: the user's credentials there are hidden too, whatever HOME the worker is given. */
  service_home: string;
  /** The worker's environment: base URLs of model APIs are read from it. */
  env: Readonly<Record<string, string>>;
  /** Brainstem's data directory (journal, tokens, keys, session env values, logs; worktrees by default). */
  data_dir: string;
  profiles_dir: string;
  worktrees_dir: string;
  /** Where the session's runtime reads its emitted profile from (under the data directory). */
  session_config_dir: string;
  /** The service's URL as workers get it (BRAINSTEM_URL). */
  service_url: string;
  /** The machine's temp folder. */
  tmp_root: string;
  /**
   * The repository's own git directory when the cwd is a linked worktree (its `.git` is a file): commits write objects
   * and refs there. Null otherwise (a checkout's `.git` is inside its cwd).
   */
  git_common_dir: string | null;
  /** The entries of the data directory, when the cwd lies inside it (a worktree there): each but the cwd's is denied. */
  data_dir_entries: readonly string[];
  profile: PolicyProfileSandbox | null;
  /** Model API URLs the runtime's own configuration names (codex's `base_url`, OpenCode's `baseURL`). */
  config_urls: readonly string[];
}

/** Hidden from every worker: credentials of other tools (the list), relative to home. */
export const DEFAULT_DENY_READ_HOME: readonly string[] = ['.ssh', '.aws', '.gnupg', '.config/gh', '.netrc', '.docker', '.kube', '.git-credentials'];

/** Each runtime's own state, relative to home: written by the runtime as it works. */
function runtimeState(runtime: string, home: string, env: Readonly<Record<string, string>>): { dirs: string[]; files: string[] } {
  const xdg = (name: string, fallback: string) => env[name] || join(home, fallback);
  switch (runtime) {
    case 'claude-code':
      return {
        dirs: [env.CLAUDE_CONFIG_DIR || join(home, '.claude'), join(xdg('XDG_CACHE_HOME', '.cache'), 'claude'), join(xdg('XDG_CONFIG_HOME', '.config'), 'claude')],
        files: [join(home, '.claude.json'), join(home, '.claude.json.backup')],
      };
    case 'codex':
      return { dirs: [env.CODEX_HOME || join(home, '.codex')], files: [] };
    case 'gemini-cli':
      return { dirs: [join(env.GEMINI_CLI_HOME || home, '.gemini')], files: [] };
    case 'opencode':
      return {
        dirs: [['XDG_DATA_HOME', '.local/share'], ['XDG_STATE_HOME', '.local/state'], ['XDG_CACHE_HOME', '.cache'], ['XDG_CONFIG_HOME', '.config']].map(([v, d]) => join(xdg(v, d), 'opencode')),
        files: [],
      };
    default:
      return { dirs: [], files: [] };
  }
}

/**
 * The settings each runtime reads permissions, hooks or MCP servers from: a worker that wrote them would widen its own
 * rights (home-relative `~/…`, cwd-relative otherwise). Only the session's own runtime's: srt covers a denied path
 * that does not exist with an empty mount point while the worker runs, which the worktree would show as untracked.
 */
const RUNTIME_SETTINGS: Readonly<Record<string, readonly string[]>> = {
  'claude-code': ['~/.claude/settings.json', '~/.claude/settings.local.json', '.claude/settings.json', '.claude/settings.local.json'],
  codex: ['~/.codex/config.toml', '.codex/config.toml'],
  'gemini-cli': ['~/.gemini/settings.json', '.gemini/settings.json'],
  opencode: ['~/.config/opencode/opencode.json', '~/.config/opencode/opencode.jsonc', 'opencode.json', 'opencode.jsonc'],
};

/** The model APIs each runtime talks to by default, and the variables that move them. */
const MODEL_APIS: Readonly<Record<string, { hosts: readonly string[]; urls: readonly string[] }>> = {
  'claude-code': { hosts: ['anthropic.com', '*.anthropic.com', 'claude.ai', '*.claude.ai'], urls: ['ANTHROPIC_BASE_URL'] },
  codex: { hosts: ['openai.com', '*.openai.com', 'chatgpt.com', '*.chatgpt.com'], urls: ['OPENAI_BASE_URL'] },
  'gemini-cli': { hosts: ['*.googleapis.com'], urls: ['GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_BASE_URL'] },
  opencode: { hosts: ['opencode.ai', '*.opencode.ai', 'models.dev', 'api.anthropic.com', 'api.openai.com'], urls: ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL'] },
};

/** `host:port` of an http(s) URL in srt's grammar (IPv6 bracketed), or null. */
export function urlHost(url: string): { entry: string; host: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { entry: `${u.hostname}:${port}`, host: u.hostname, port };
}

/** The port of an allow entry naming a loopback host with one (`127.0.0.1:4820`, `localhost:3000`), else null. */
function loopbackPort(entry: string): number | null {
  const at = entry.lastIndexOf(':');
  if (at < 0 || entry.endsWith(']')) return null;
  const host = entry.slice(0, at);
  const port = Number(entry.slice(at + 1));
  const loopback = host === 'localhost' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return loopback && Number.isInteger(port) && port > 0 && port < 65536 ? port : null;
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/** A profile's path: `~/…` from home, relative from the cwd, absolute as it is. */
function pathOf(p: string, facts: SandboxFacts): string {
  if (p === '~') return facts.home;
  if (p.startsWith('~/')) return join(facts.home, p.slice(2));
  return isAbsolute(p) ? resolve(p) : resolve(facts.cwd, p);
}

/**
 * The sandbox of a create: its policy's facts, or why it runs without one (`required`: refused then), as the mode
 * (BRAINSTEM_SANDBOX) and the machine decide.
 */
export type SandboxFact = { on: true; facts: Omit<SandboxFacts, 'cwd' | 'git_common_dir'> } | { on: false; reason: string; required: boolean };

/** The policy of one session, from its facts. Pure. */
export function sandboxPolicy(facts: SandboxFacts): SandboxPolicy {
  const home = (p: string) => join(facts.home, p);
  const tmp = join(facts.tmp_root, 'brainstem-sandbox', facts.session_id);
  const profile = facts.profile;
  const service = urlHost(facts.service_url);
  const api = MODEL_APIS[facts.runtime];
  const apiUrls = [
    ...unique([...(api?.urls ?? []), ...Object.keys(facts.env).filter((k) => k.endsWith('_BASE_URL'))])
      .map((k) => facts.env[k])
      .filter((v): v is string => typeof v === 'string'),
    ...facts.config_urls,
  ]
    .map(urlHost)
    .filter((u): u is NonNullable<typeof u> => u !== null)
    .map((u) => u.entry);
  // What lies under the data directory and must stay readable: the worker's own worktree, its runtime's config files.
  const underData = (p: string) => p === facts.data_dir || p.startsWith(`${facts.data_dir}/`);
  const worktreeHidden = facts.cwd.startsWith(`${facts.worktrees_dir}/`) || underData(facts.cwd);
  // A write deny wins over every allow, the cwd's too: a worktree inside the data directory keeps its own way in.
  const dataDeny = underData(facts.cwd)
    ? facts.data_dir_entries.map((e) => join(facts.data_dir, e)).filter((p) => facts.cwd !== p && !facts.cwd.startsWith(`${p}/`))
    : [facts.data_dir];
  const allow = unique([...(service ? [service.entry] : []), ...(api?.hosts ?? []), ...apiUrls, ...(profile?.network.allow ?? [])]);
  const git = facts.git_common_dir;
  const state = runtimeState(facts.runtime, facts.home, facts.env);
  return {
    allow_write: unique([
      facts.cwd,
      tmp,
      ...(git ? [git] : []),
      ...state.dirs,
      ...state.files,
      ...(profile?.allow_write ?? []).map((p) => pathOf(p, facts)),
    ]),
    deny_write: unique([
      ...dataDeny,
      facts.profiles_dir,
      // What git runs or reads as configuration: a worker that wrote them would run code outside its sandbox later.
      ...(git ? [join(git, 'hooks'), join(git, 'config')] : []),
      ...(RUNTIME_SETTINGS[facts.runtime] ?? []).map((p) => (p.startsWith('~/') ? home(p.slice(2)) : join(facts.cwd, p))),
    ]),
    deny_read: unique([
      ...DEFAULT_DENY_READ_HOME.map(home),
      ...DEFAULT_DENY_READ_HOME.map((p) => join(facts.service_home, p)),
      facts.data_dir,
      facts.worktrees_dir,
      ...(profile?.deny_read ?? []).map((p) => pathOf(p, facts)),
    ]),
    allow_read: unique([facts.session_config_dir, ...(worktreeHidden ? [facts.cwd] : [])]),
    network: { allow, deny: unique([...(profile?.network.deny ?? [])]) },
    loopback_ports: [...new Set(allow.map(loopbackPort).filter((p): p is number => p !== null))],
    tmp_dir: tmp,
    make_dirs: state.dirs,
  };
}
