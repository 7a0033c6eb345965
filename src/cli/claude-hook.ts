import { readFileSync } from 'node:fs';
import { IncomingMessage, request as httpRequest } from 'node:http';

/**
 * `brainstem hook <event>`: what claude runs for each hook event once Brainstem's hooks are installed
 * (docs/guide/external-sessions.md). It reads the event on stdin and posts it to the service with the hook token.
 *
 * A broken Brainstem never blocks a user's claude: a service that is down, slow (no answer within REPORT_TIMEOUT_MS),
 * refusing or answering nonsense makes the hook exit at once, printing nothing, with code 0, so claude goes on as if no
 * hook were installed. Only a decision the service answered is printed, in the shape claude reads for that event.
 *
 * It imports only Node's own modules: bin/brainstem.js loads this file alone (claude runs it on every event, so it
 * must start fast), without the rest of the command line.
 */

/** How long the service has to answer a report before the hook gives up and claude goes on. */
export const REPORT_TIMEOUT_MS = 300;
/** Beyond the wait the service announced, how long its decision may take to arrive. */
const WAIT_MARGIN_MS = 5000;
/** The longest wait the hook ever keeps (the service announces at most BRAINSTEM_EXTERNAL_*_WAIT_S, up to an hour). */
const MAX_WAIT_MS = 3_600_000;
/** claude's hook input is small; anything larger is not a hook event. */
const MAX_INPUT_BYTES = 4 << 20;
const STDIN_TIMEOUT_MS = 5000;

type Decision = { kind: 'continue'; text: string } | { kind: 'permission'; behavior: 'allow' | 'deny'; message: string | null };

export interface HookIo {
  stdin: NodeJS.ReadableStream;
  /** What claude reads: printed only for a decision. */
  write(text: string): void;
  env: NodeJS.ProcessEnv;
}

interface HookArgs {
  event: string;
  url: string;
  tokenFile: string;
}

function parseArgs(args: readonly string[]): HookArgs | null {
  const [event, ...rest] = args;
  const flags = new Map<string, string>();
  for (let i = 0; i + 1 < rest.length; i += 2) flags.set(rest[i], rest[i + 1]);
  const url = flags.get('--url');
  const tokenFile = flags.get('--token-file');
  return event && url && tokenFile ? { event, url: url.replace(/\/+$/, ''), tokenFile } : null;
}

function readInput(stdin: NodeJS.ReadableStream): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => resolve(null), STDIN_TIMEOUT_MS);
    stdin.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_INPUT_BYTES) chunks.push(c);
    });
    stdin.on('error', () => resolve(null));
    stdin.on('end', () => {
      clearTimeout(timer);
      resolve(size <= MAX_INPUT_BYTES ? Buffer.concat(chunks).toString('utf8') : null);
    });
  });
}

/** A JSON POST answered 200 within `timeoutMs`, as its parsed body; null for anything else (down, slow, refused). */
function post(url: string, token: string, body: unknown, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(value);
    };
    const data = JSON.stringify(body);
    // TLS is loaded only for a service behind https: loading it costs every other hook its time.
    const send: typeof httpRequest = url.startsWith('https:') ? (require('node:https') as typeof import('node:https')).request : httpRequest;
    const req = send(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
    });
    const timer = setTimeout(() => finish(null), timeoutMs);
    req.on('error', () => finish(null));
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => finish(null));
      res.on('end', () => {
        if (res.statusCode !== 200) return finish(null);
        try {
          finish(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          finish(null);
        }
      });
    });
    req.end(data);
  });
}

/** claude's pid as claude gives it to its hooks (CLAUDE_PID); null where it does not. */
function claudePid(env: NodeJS.ProcessEnv): number | null {
  const pid = Number(env.CLAUDE_PID);
  return Number.isSafeInteger(pid) && pid > 1 ? pid : null;
}

function asDecision(answer: unknown): Decision | null {
  const d = (answer as { decision?: unknown } | null)?.decision as Record<string, unknown> | null | undefined;
  if (!d || typeof d !== 'object') return null;
  if (d.kind === 'continue' && typeof d.text === 'string' && d.text.length > 0) return { kind: 'continue', text: d.text };
  if (d.kind === 'permission' && (d.behavior === 'allow' || d.behavior === 'deny')) return { kind: 'permission', behavior: d.behavior, message: typeof d.message === 'string' ? d.message : null };
  return null;
}

/** The decision in the shape claude reads for the event: Stop's block, PermissionRequest's decision; else nothing. */
export function hookOutput(event: string, decision: Decision): string | null {
  if (event === 'Stop' && decision.kind === 'continue') return JSON.stringify({ decision: 'block', reason: decision.text });
  if (event === 'PermissionRequest' && decision.kind === 'permission') {
    const answer = decision.behavior === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: decision.message ?? 'denied through Brainstem' };
    return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: answer } });
  }
  return null;
}

/** One hook event, start to end. Never throws: every failure ends with nothing printed. */
export async function runHook(args: readonly string[], io: HookIo): Promise<void> {
  try {
    const a = parseArgs(args);
    if (!a) return;
    const input = await readInput(io.stdin);
    if (input === null) return;
    const event: unknown = JSON.parse(input);
    const token = readFileSync(a.tokenFile, 'utf8').trim();
    const base = `${a.url}/api/v1/external/claude`;
    const answer = (await post(`${base}/events/${encodeURIComponent(a.event)}`, token, { event, claude_pid: claudePid(io.env) }, REPORT_TIMEOUT_MS)) as {
      wait?: { id?: unknown; timeout_s?: unknown } | null;
    } | null;
    const wait = answer?.wait;
    if (!wait || typeof wait.id !== 'string' || typeof wait.timeout_s !== 'number') return;
    const waitMs = Math.min(MAX_WAIT_MS, Math.max(0, wait.timeout_s * 1000)) + WAIT_MARGIN_MS;
    const decision = asDecision(await post(`${base}/waits/${encodeURIComponent(wait.id)}`, token, {}, waitMs));
    const out = decision && hookOutput(a.event, decision);
    if (out) io.write(out);
  } catch {
    // A hook that cannot do its part leaves claude as it would be without it.
  }
}

/** The process's entry (bin/brainstem.js): runs the hook, then exits 0 once what it printed is written. */
export function runHookProcess(args: readonly string[]): void {
  let printed = '';
  void runHook(args, { stdin: process.stdin, env: process.env, write: (t) => (printed += t) }).then(() => {
    if (printed) process.stdout.write(printed, () => process.exit(0));
    else process.exit(0);
  });
}
