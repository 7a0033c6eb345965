import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { isPlainObject } from '../../profiles/merge-patch';
import { LineSplitter, MAX_LINE_CHARS } from '../../sessions/session-log';
import { ProcessRunner, WorkerProcess } from '../../sessions/runtimes/process-runner';
import { OUTPUT_DRAIN_MS, Turn, turnModel } from '../../sessions/runtimes/turn-conversation';
import { BrainActivity, BrainAgent, BrainLaunch, BrainTurnEnd } from './brain-agent.port';
import { PerTurnBrainRuntime } from './per-turn-brain.runtimes';

/** How much of a turn's stderr is kept, to say why it failed. */
const STDERR_TAIL_CHARS = 4000;

type Exit = { code: number | null; signal: string | null; error: Error | null };

/**
 * The main brain on a runtime that runs one process per turn (codex, gemini-cli, opencode): each turn is a process
 * given the prompt on stdin, continuing the conversation by the runtime's own resume flag. Its output is read with
 * the protocol the workers of that runtime use, and reported as it comes.
 */
export class PerTurnBrainAgent implements BrainAgent {
  readonly runtime: string;
  private prepared: { args: string[]; env: Record<string, string> } | null = null;
  private proc: WorkerProcess | null = null;
  private interruption: string | null = null;

  constructor(
    private readonly brain: PerTurnBrainRuntime,
    private readonly launch: () => BrainLaunch,
    private readonly runner: ProcessRunner,
  ) {
    this.runtime = brain.protocol.runtime;
  }

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  turn(prompt: string, conversationId: string | null, on: (activity: BrainActivity) => void): Promise<BrainTurnEnd> {
    const { protocol } = this.brain;
    const launch = this.launch();
    const { args, env } = this.prepare(launch);
    const command = { command: protocol.executable, args: protocol.args({ args, profile_args: launch.profile_args, sandbox: null }, conversationId) };
    const proc = this.runner.spawn({ ...command, cwd: launch.cwd, env: { ...launch.env, ...env } });
    this.proc = proc;
    this.interruption = null;
    const turn = new Turn(on);
    turn.model = launch.model ?? turnModel({ args, profile_args: launch.profile_args });
    turn.cumulativeUsage = protocol.cumulativeUsage === true;
    let threadId: string | null = null;
    /** A resume that started another conversation instead: the brain's context is not in it. */
    let strayThread: string | null = null;
    let stderr = '';
    const lines = new LineSplitter((line) => {
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        return; // Not protocol.
      }
      if (!isPlainObject(event) || strayThread !== null) return;
      const id = protocol.read(event, turn);
      if (id === null || id === threadId) return;
      if (conversationId !== null && id !== conversationId) {
        strayThread = id;
        if (proc.pid !== null) this.runner.signalGroup(proc.pid, 'SIGKILL');
        return;
      }
      threadId = id;
      on({ kind: 'conversation', id });
    }, MAX_LINE_CHARS);
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => lines.push(c));
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (c: string) => (stderr = (stderr + c).slice(-STDERR_TAIL_CHARS)));
    proc.stdin.on('error', () => undefined); // A process that died at once closed its stdin: its exit says why.
    proc.stdin.end(prompt);

    return new Promise((resolve) => {
      let outputEnded = false;
      let exit: Exit | null = null;
      let drain: NodeJS.Timeout | null = null;
      const finish = () => {
        if (!exit || this.proc !== proc) return;
        if (drain) clearTimeout(drain);
        this.proc = null;
        turn.ended();
        const ended = { turn, exit, stderr, conversationId, threadId, strayThread };
        resolve(this.ending(ended));
      };
      proc.stdout.on('close', () => {
        outputEnded = true;
        finish();
      });
      proc.onExit((code, signal, error) => {
        exit = { code, signal, error };
        if (outputEnded || error) finish();
        else (drain = setTimeout(finish, OUTPUT_DRAIN_MS)).unref();
      });
    });
  }

  resolvePermission(): void {
    // Headless turns ask no permissions: the brain's MCP server is trusted, and what would ask is refused.
  }

  interrupt(reason: string): void {
    if (this.proc?.pid == null) return;
    this.interruption = reason;
    this.runner.signalGroup(this.proc.pid, 'SIGKILL');
  }

  /** Between turns nothing runs; a turn still running is cut off. */
  close(): Promise<void> {
    this.interrupt('the brain was closed');
    return Promise.resolve();
  }

  /** Writes the runtime's files in the brain's directory once (the service's URL and the profile hold for its life). */
  private prepare(launch: BrainLaunch): { args: string[]; env: Record<string, string> } {
    if (this.prepared) return this.prepared;
    const { args, env, files } = this.brain.setup(launch);
    for (const file of files) {
      const path = join(launch.cwd, file.path);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.content);
    }
    return (this.prepared = { args, env });
  }

  private ending(e: { turn: Turn; exit: Exit; stderr: string; conversationId: string | null; threadId: string | null; strayThread: string | null }): BrainTurnEnd {
    const runtime = this.runtime;
    if (this.interruption !== null) return { outcome: 'failed', reason: this.interruption };
    if (e.exit.error) return { outcome: 'failed', reason: `${runtime} could not start: ${e.exit.error.message}` };
    if (e.strayThread !== null) {
      return { outcome: 'failed', reason: `${runtime} started conversation ${e.strayThread} instead of resuming ${e.conversationId}`, resume_failed: true };
    }
    const refused = e.conversationId !== null && e.threadId === null ? lineWith(e.stderr, this.brain.protocol.resumeRefused) : null;
    if (refused !== null) return { outcome: 'failed', reason: `${runtime} could not resume conversation ${e.conversationId}: ${refused}`, resume_failed: true };
    const limit = e.turn.limit;
    if (limit !== null) return { outcome: 'failed', reason: `its model's ${limit.reason.replace('_', ' ')} refused the turn${e.turn.failureReason ? `: ${e.turn.failureReason}` : ''}`, limit };
    const failure = e.turn.failureReason;
    if (failure !== null) return { outcome: 'failed', reason: failure, ...(e.turn.contextExceeded ? { context_full: true } : {}) };
    if (e.exit.code !== 0 || e.exit.signal !== null) {
      const said = lastLine(e.stderr);
      return { outcome: 'failed', reason: `${runtime} exited with ${e.exit.signal ?? `code ${e.exit.code}`}${said ? `: ${said}` : ''}` };
    }
    return { outcome: 'completed', text: e.turn.lastText };
  }
}

/** stderr's lines without terminal colours (opencode colours its errors). */
function linesOf(text: string): string[] {
  return stripVTControlCharacters(text).split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

/** The line of `text` that holds `marker`, or null. */
function lineWith(text: string, marker: string): string | null {
  return linesOf(text).find((line) => line.includes(marker)) ?? null;
}

function lastLine(text: string): string | null {
  return linesOf(text).pop() ?? null;
}
