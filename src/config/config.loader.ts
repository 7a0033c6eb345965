import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { load } from 'js-yaml';
import { splitHostPort } from '../common/host-port';
import { isInstalledPackage } from '../common/package-root';
import { parsePriceTable } from './price-table';
import { BrainstemConfig, KNOBS, Knob, flagOf } from './config.schema';
import { notifyProblems } from './notify-config';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export interface ConfigSources {
  /** Text of config/default.yaml (or the file named by BRAINSTEM_CONFIG). */
  yamlText: string;
  yamlName: string;
  env: Record<string, string | undefined>;
  argv: readonly string[];
  cwd: string;
  home: string;
  /**
   * Replaces the defaults file's `journal.dir` (the data directory), as an installed package does: see
   * installedDataDir. The environment and flags still win.
   */
  dataDir?: string;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host);
}

function getPath(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof o[k] !== 'object' || o[k] === null) o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys[keys.length - 1]] = value;
}

/** Coerces a YAML value (typed) or an env/flag value (string) to the knob's type, or explains why not. */
function coerce(knob: Knob, raw: unknown): { value: unknown } | { error: string } {
  const fromText = typeof raw === 'string';
  switch (knob.kind) {
    case 'int': {
      const n = fromText ? (/^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN) : raw;
      if (typeof n !== 'number' || !Number.isInteger(n)) return { error: `expected an integer, got ${JSON.stringify(raw)}` };
      if (n < knob.min || n > knob.max) return { error: `expected an integer in ${knob.min}..${knob.max}, got ${n}` };
      return { value: n };
    }
    case 'bool': {
      if (typeof raw === 'boolean') return { value: raw };
      if (fromText && /^(true|1|yes|on)$/i.test(raw)) return { value: true };
      if (fromText && /^(false|0|no|off)$/i.test(raw)) return { value: false };
      return { error: `expected true or false, got ${JSON.stringify(raw)}` };
    }
    case 'string': {
      if (raw === null || raw === '') return knob.nullable ? { value: null } : { error: 'must not be empty' };
      if (typeof raw !== 'string') return { error: `expected a string, got ${JSON.stringify(raw)}` };
      return { value: raw };
    }
    case 'enum': {
      if (typeof raw !== 'string' || !knob.values.includes(raw)) {
        return { error: `expected one of ${knob.values.join(', ')}, got ${JSON.stringify(raw)}` };
      }
      return { value: raw };
    }
    case 'number': {
      if (raw === null || raw === '') return { value: null };
      const n = fromText ? (/^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw.trim()) : NaN) : raw;
      if (typeof n !== 'number' || !Number.isFinite(n)) return { error: `expected a number, got ${JSON.stringify(raw)}` };
      if (n < knob.min || n > knob.max) return { error: `expected a number in ${knob.min}..${knob.max}, got ${n}` };
      return { value: n };
    }
    case 'prices': {
      let value: unknown = raw;
      if (fromText) {
        try {
          value = JSON.parse(raw);
        } catch {
          return { error: 'expected JSON: {"<model>": {"input": …, "output": …, "cache_read": …, "cache_write": …}}' };
        }
      }
      const parsed = parsePriceTable(value);
      return 'error' in parsed ? { error: parsed.error } : { value: parsed.table };
    }
    case 'list': {
      if (fromText) return { value: raw.split(',').map((s) => s.trim()).filter(Boolean) };
      if (raw === null) return { value: [] };
      if (!Array.isArray(raw) || !raw.every((s) => typeof s === 'string')) return { error: 'expected a list of strings' };
      return { value: raw };
    }
  }
}

function flagValues(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    if (eq > 0) out.set(a.slice(0, eq), a.slice(eq + 1));
    else if (i + 1 < argv.length) out.set(a, argv[++i]);
  }
  return out;
}

function expandPath(p: string, cwd: string, home: string): string {
  const expanded = p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : p;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

/** Builds the typed config: YAML defaults, then env, then flags. Every problem is reported, each naming its source. */
export function buildConfig(src: ConfigSources): BrainstemConfig {
  const problems: string[] = [];
  let yaml: unknown;
  try {
    yaml = load(src.yamlText) ?? {};
  } catch (e) {
    throw new ConfigError([`${src.yamlName}: not valid YAML: ${(e as Error).message.split('\n')[0]}`]);
  }
  const flags = flagValues(src.argv);
  const out: Record<string, unknown> = {};
  for (const knob of KNOBS) {
    const flag = flagOf(knob);
    const fromFile = knob.path === 'journal.dir' && src.dataDir !== undefined ? src.dataDir : getPath(yaml, knob.path);
    const layers: Array<[string, unknown]> = [[`${src.yamlName} ${knob.path}`, fromFile]];
    if (src.env[knob.env] !== undefined) layers.push([knob.env, src.env[knob.env]]);
    if (flags.has(flag)) layers.push([flag, flags.get(flag)]);
    const [name, raw] = layers[layers.length - 1];
    if (raw === undefined) {
      problems.push(`${knob.env}: no value (missing ${knob.path} in ${src.yamlName})`);
      continue;
    }
    const r = coerce(knob, raw);
    if ('error' in r) problems.push(`${name}: ${r.error}`);
    else setPath(out, knob.path, r.value);
  }
  if (problems.length) throw new ConfigError(problems);
  const cfg = out as unknown as BrainstemConfig;
  cfg.journal.dir = expandPath(cfg.journal.dir, src.cwd, src.home);
  cfg.profiles.dir = expandPath(cfg.profiles.dir, src.cwd, src.home);
  // Outside the repositories worked on, by default: beside the service's own data.
  cfg.worktrees.dir = cfg.worktrees.dir === null ? join(cfg.journal.dir, 'worktrees') : expandPath(cfg.worktrees.dir, src.cwd, src.home);
  const driverNeeds = { command: ['command', 'BRAINSTEM_MAIN_BRAIN_COMMAND'], webhook: ['webhook_url', 'BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL'] } as const;
  if (cfg.main_brain.driver === 'command' || cfg.main_brain.driver === 'webhook') {
    const [key, env] = driverNeeds[cfg.main_brain.driver];
    if (!cfg.main_brain[key]) throw new ConfigError([`${env}: required when BRAINSTEM_MAIN_BRAIN_DRIVER is ${cfg.main_brain.driver}`]);
  }
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(cfg.node.id)) {
    throw new ConfigError([`BRAINSTEM_NODE_ID: expected lowercase letters, digits and - (at most 64), got ${JSON.stringify(cfg.node.id)}`]);
  }
  if (cfg.journal.url !== null && !/^postgres(ql)?:\/\/\S+$/.test(cfg.journal.url)) {
    throw new ConfigError(['BRAINSTEM_JOURNAL_URL: expected a postgres:// or postgresql:// URL']);
  }
  if (cfg.node.url !== null && !/^https?:\/\/[^\s/?#]+$/.test(cfg.node.url)) {
    throw new ConfigError([`BRAINSTEM_NODE_URL: expected the node's base URL, http(s)://host:port with no path, got ${JSON.stringify(cfg.node.url)}`]);
  }
  if (cfg.main_brain.webhook_url !== null && !/^https?:\/\/[^\s]+$/.test(cfg.main_brain.webhook_url)) {
    throw new ConfigError([`BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL: expected an http(s) URL, got ${JSON.stringify(cfg.main_brain.webhook_url)}`]);
  }
  if (cfg.server.api_token !== null && cfg.server.api_token !== cfg.server.api_token.trim()) {
    // Clients' headers lose surrounding spaces on the way: such a token could never match.
    throw new ConfigError(['BRAINSTEM_API_TOKEN: must not start or end with whitespace']);
  }
  if (cfg.server.auth === 'off' && !isLoopbackHost(cfg.server.host)) {
    throw new ConfigError([`BRAINSTEM_AUTH: off is for loopback only; refusing to serve ${cfg.server.host} without credentials`]);
  }
  const badHost = cfg.server.allowed_hosts.find((h) => splitHostPort(h.trim().toLowerCase()) === null);
  if (badHost !== undefined) throw new ConfigError([`BRAINSTEM_ALLOWED_HOSTS: not a host name or host:port: ${JSON.stringify(badHost)}`]);
  const notify = notifyProblems(cfg.notify);
  if (notify.length > 0) throw new ConfigError(notify);
  return cfg;
}

/**
 * The data directory of an installed package (`npm install -g`): `$XDG_STATE_HOME/brainstem/journal` when XDG_STATE_HOME
 * is an absolute path (the XDG spec ignores a relative one), else `~/.brainstem/journal`. A command started from any
 * folder must not scatter journals into it, as the clone's `./journal` would.
 */
export function installedDataDir(env: Record<string, string | undefined>, home: string): string {
  const state = env.XDG_STATE_HOME;
  return join(state && isAbsolute(state) ? join(state, 'brainstem') : join(home, '.brainstem'), 'journal');
}

/** Reads the config file and the process environment. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  argv: readonly string[] = process.argv.slice(2),
): BrainstemConfig {
  const file = env.BRAINSTEM_CONFIG ?? findDefaultConfig();
  let yamlText: string;
  try {
    yamlText = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError([`BRAINSTEM_CONFIG: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  }
  // The package's own defaults name ./journal, the clone's; an installed package keeps its data in the user's home.
  const dataDir = env.BRAINSTEM_CONFIG === undefined && isInstalledPackage() ? installedDataDir(env, homedir()) : undefined;
  const cfg = buildConfig({ yamlText, yamlName: file, env, argv, cwd: process.cwd(), home: homedir(), dataDir });
  const problems = [
    ['BRAINSTEM_JOURNAL_DIR', cfg.journal.dir],
    ['BRAINSTEM_PROFILES_DIR', cfg.profiles.dir],
    ['BRAINSTEM_WORKTREES_DIR', cfg.worktrees.dir],
  ].flatMap(([name, dir]) => {
    const problem = directoryProblem(dir);
    return problem ? [`${name}: ${problem}`] : [];
  });
  if (problems.length) throw new ConfigError(problems);
  return cfg;
}

/** Why a data directory cannot be used (created on first use if missing), or null if it can. */
function directoryProblem(dir: string): string | null {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    if (!statSync(at).isDirectory()) return at === dir ? `${dir} is not a directory` : `${dir} cannot be created: ${at} is not a directory`;
    accessSync(at, constants.W_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    return at === dir ? `${dir} is not writable (${code})` : `${dir} cannot be created in ${at} (${code})`;
  }
  return null;
}

/** config/default.yaml sits at the package root: two levels above src/config, three above dist/src/config. */
function findDefaultConfig(): string {
  const candidates = [resolve(__dirname, '../../config/default.yaml'), resolve(__dirname, '../../../config/default.yaml')];
  return candidates.find((c) => existsSync(c)) ?? candidates[0];
}
