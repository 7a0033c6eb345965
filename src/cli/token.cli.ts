import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config/config.loader';

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const USAGE = 'usage: brainstem token [--brain]   print the user token (or the main brain token) of this configuration';

/** The data directory of this configuration (BRAINSTEM_JOURNAL_DIR, default.yaml), or null when it is invalid. */
export function dataDirOf(env: NodeJS.ProcessEnv): string | null {
  try {
    return loadConfig(env, []).journal.dir;
  } catch (e) {
    if (e instanceof ConfigError) return null;
    throw e;
  }
}

/**
 * The user's token for command-line clients and where it came from: BRAINSTEM_API_TOKEN when set, else the api-token
 * file the service wrote in its data directory (token null when there is none).
 */
export function userCredential(env: NodeJS.ProcessEnv): { token: string | null; from: string } {
  if (env.BRAINSTEM_API_TOKEN) return { token: env.BRAINSTEM_API_TOKEN, from: 'BRAINSTEM_API_TOKEN' };
  const dir = dataDirOf(env);
  if (dir === null) return { token: null, from: 'the data directory (the configuration is invalid)' };
  const file = join(dir, 'api-token');
  return { token: readSecret(file), from: file };
}

export function userToken(env: NodeJS.ProcessEnv): string | null {
  return userCredential(env).token;
}

function readSecret(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** `brainstem token [--brain]`: for `curl -H "Authorization: Bearer $(npx brainstem token)"`. */
export function tokenCli(argv: readonly string[], io: Io, env: NodeJS.ProcessEnv = process.env): number {
  if (argv.length > 1 || (argv.length === 1 && argv[0] !== '--brain')) {
    io.err(USAGE);
    return 2;
  }
  const brain = argv[0] === '--brain';
  const dir = dataDirOf(env);
  const token = brain ? (dir ? readSecret(join(dir, 'brain-token')) : null) : userToken(env);
  if (!token) {
    io.err(`brainstem token: no ${brain ? 'main brain' : 'user'} token in ${dir ?? 'the data directory'}; start the service once (npm start) to create it`);
    return 1;
  }
  io.out(token);
  return 0;
}
