import { execFile } from 'node:child_process';

/** How long `claude agents --json` may take before the listing says it could not be read. */
const LIST_TIMEOUT_MS = 15_000;
const MAX_OUTPUT_BYTES = 1 << 20;

/** One of claude's agents (`claude agents --json`: its interactive and background sessions), as the route lists it. */
export interface ClaudeAgent {
  /** claude's short id (what `claude attach` takes). */
  id: string;
  /** claude's session id: the external session it is, once adopted or once its hooks report. */
  session_id: string;
  pid: number | null;
  cwd: string | null;
  /** `background` or `interactive`, as claude says. */
  kind: string | null;
  name: string | null;
  /** claude's words: status `busy`, `waiting`, `idle`; state `working`, `blocked`, `done`. */
  status: string | null;
  state: string | null;
  started_at: string | null;
  /** `you` when claude says the agent waits on its user (state `blocked`, or status `waiting`); else null. */
  needs: 'you' | null;
}

export type AgentsListing = { available: true; agents: ClaudeAgent[] } | { available: false; reason: string };

/** Runs a program and gives what it wrote; a program that is not there ends with code null and its error. */
export type RunProgram = (file: string, args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string; error: string | null }>;

/** The real one: claude with the service's environment (without credentials), bounded in time and output. */
export function runProgram(env: Record<string, string>, cwd: string): RunProgram {
  return (file, args) =>
    new Promise((resolve) => {
      execFile(file, args, { env, cwd, timeout: LIST_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr, error: err && code === null ? err.message : null });
      });
    });
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.length <= 4096 ? v : null);

/** One entry of claude's JSON, only the fields named (and only of the types claude gives); null when it has no session id. */
export function agentOf(entry: unknown): ClaudeAgent | null {
  if (typeof entry !== 'object' || entry === null) return null;
  const e = entry as Record<string, unknown>;
  const session_id = text(e.sessionId);
  if (session_id === null || !/^[A-Za-z0-9_-]{1,128}$/.test(session_id)) return null;
  const state = text(e.state);
  const status = text(e.status);
  const started = typeof e.startedAt === 'number' && Number.isFinite(e.startedAt) ? new Date(e.startedAt).toISOString() : null;
  return {
    id: text(e.id) ?? session_id,
    session_id,
    pid: Number.isSafeInteger(e.pid) && (e.pid as number) > 1 ? (e.pid as number) : null,
    cwd: text(e.cwd),
    kind: text(e.kind),
    name: text(e.name),
    status,
    state,
    started_at: started,
    needs: state === 'blocked' || status === 'waiting' ? 'you' : null,
  };
}

/**
 * claude's agents, as `claude agents --json` lists them, when the installed claude has that command (claude 2.1.332
 * has it); otherwise why not, in so many words.
 */
export async function listClaudeAgents(run: RunProgram): Promise<AgentsListing> {
  const r = await run('claude', ['agents', '--json']);
  if (r.error !== null) return { available: false, reason: `claude could not be run (${r.error}): is it on the service's PATH?` };
  if (r.code !== 0) {
    const said = (r.stderr || r.stdout).trim().split('\n')[0]?.slice(0, 300) ?? '';
    return { available: false, reason: `this claude has no \`claude agents --json\` (it exited ${r.code}${said ? `: ${said}` : ''})` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.stdout);
  } catch {
    return { available: false, reason: '`claude agents --json` did not print JSON: this claude lists its agents another way' };
  }
  if (!Array.isArray(parsed)) return { available: false, reason: '`claude agents --json` did not print a list' };
  return { available: true, agents: parsed.map(agentOf).filter((a): a is ClaudeAgent => a !== null) };
}
