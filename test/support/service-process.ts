import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { TEST_USER_TOKEN } from './test-config';
import { waitFor } from './wait-for';

const ROOT = resolve(__dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** The user's token: BRAINSTEM_API_TOKEN as given (the test token unless the env sets it). */
  token: string;
  /** `Authorization: Bearer <user token>`. */
  auth: { authorization: string };
  output: () => string;
  /** What it wrote to stdout alone. */
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Where the service runs from: the TypeScript source through swc, or the build in dist/ (as `npm start` runs it). */
export type ServiceEntry = 'source' | 'build';

/** Runs the real service (src/main.ts through swc, or dist/src/main.js) as a child process with the given env. */
export function spawnService(env: Record<string, string>, args: string[] = [], entry: ServiceEntry = 'source'): Pick<ServiceProcess, 'child' | 'output' | 'stdout' | 'exited'> {
  const main = entry === 'build' ? [resolve(ROOT, 'dist/src/main.js')] : ['-r', '@swc-node/register', resolve(ROOT, 'src/main.ts')];
  const child = spawn(process.execPath, [...main, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', BRAINSTEM_PORT: '0', BRAINSTEM_API_TOKEN: TEST_USER_TOKEN, BRAINSTEM_MAIN_BRAIN_DRIVER: 'stream', BRAINSTEM_SANDBOX: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    stdout += c;
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => out, stdout: () => stdout, exited };
}

/** Starts the service and waits until it prints the URL it listens on. */
export async function startService(env: Record<string, string>, args: string[] = [], entry: ServiceEntry = 'source'): Promise<ServiceProcess> {
  const p = spawnService(env, args, entry);
  const url = await waitFor(
    () => {
      if (p.child.exitCode !== null) throw new Error(`service exited ${p.child.exitCode}:\n${p.output()}`);
      return /Brainstem listening on (http:\/\/\S+)/.exec(p.output())?.[1];
    },
    { timeoutMs: 60000, what: 'the service to listen' },
  );
  const token = env.BRAINSTEM_API_TOKEN ?? TEST_USER_TOKEN;
  return { ...p, url, token, auth: { authorization: `Bearer ${token}` } };
}

/** A JSON request to a running service with its user's token; the answer's body, or an error naming a 4xx/5xx. */
export async function callService<T>(svc: Pick<ServiceProcess, 'url' | 'auth'>, method: string, path: string, body?: object): Promise<T> {
  const res = await fetch(`${svc.url}/api/v1${path}`, {
    method,
    headers: body ? { ...svc.auth, 'content-type': 'application/json' } : svc.auth,
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as T;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
