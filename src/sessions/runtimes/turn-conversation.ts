import { isPlainObject } from '../../profiles/merge-patch';
import { SESSION_ENV } from '../../profiles/emitters/emitter-support';
import { JsonObject } from '../session.events';
import { clipToTextLimit } from '../session.dto';
import { LineSplitter, MAX_LINE_CHARS } from '../session-log';
import { ProcessRunner, WorkerProcess } from './process-runner';
import { clipOutput } from '../loops/loop-text';
import { ModelUsage } from '../../usage/usage.model';
import { LaunchSpec, Recovery, RecoverySpec, RuntimeSink, SessionRuntime, WorkerActivity, WorkerHandle } from './runtime.port';
import { mergeUsage, modelInArgs } from './runtime-usage';
import { CONTINUE_TEXT, LimitHit } from '../session-limit.model';

/** How long a finished turn waits for the rest of its output once the process exited (a descendant may hold the pipe). */
export const OUTPUT_DRAIN_MS = 1000;
/** How long an interrupted turn's process has to end on SIGINT before it gets SIGKILL. */
export const INTERRUPT_GRACE_MS = 5000;

export type OutputEvent = Record<string, unknown>;

/**
 * What a turn's process shows while it runs, for a listener that streams it (the hosted main brain); workers
 * keep only the turn's result.
 */
export type TurnActivity =
  | { kind: 'text_delta'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'tool_use'; name: string; input: JsonObject }
  | { kind: 'usage'; context_tokens: number }
  /** What the whole turn used, per model: reported once, as it ends (`cumulative`: the thread's running total). */
  | { kind: 'turn_usage'; entries: ModelUsage[]; cumulative?: true }
  | { kind: 'api_error'; message: string };

/** What one turn's process told us: the agent's latest text, and why the turn failed, if it did. */
export class Turn {
  private text: string | null = null;
  private fresh = true;
  /** The current message came as deltas and was not yet reported whole. */
  private streamed = false;
  private failure: string | null = null;
  private trouble: string | null = null;
  private overflowed = false;
  private limitHit: Omit<LimitHit, 'prompt'> | null = null;
  private usageEntries: ModelUsage[] = [];
  /** Its runtime reports the thread's running total (codex): set by the agent that reads it. */
  cumulativeUsage = false;
  /** The model the turn runs on, when the command line or the runtime says (usage that names none is its). */
  model: string | null = null;

  constructor(
    private readonly on: (activity: TurnActivity) => void = () => undefined,
    /** A worker's tool calls and results, for its loop detector. */
    private readonly worker: (activity: WorkerActivity) => void = () => undefined,
  ) {}

  /** A complete message replaces what came before; deltas extend the current one. */
  say(text: string, delta = false): void {
    this.text = delta && !this.fresh ? (this.text ?? '') + text : text;
    this.fresh = false;
    this.trouble = null;
    this.streamed = delta;
    this.on(delta ? { kind: 'text_delta', text } : { kind: 'text', text });
  }

  /**
   * After a tool call the agent's next text is a new message: the answer is the last one. `call`: the runtime's id for
   * it (its result names it), and whether its arguments are hidden (opaque).
   */
  toolUsed(name?: string, input: JsonObject = {}, call: { id: string | null; opaque?: boolean } = { id: null }): void {
    this.flush();
    this.fresh = true;
    if (name === undefined) return;
    this.on({ kind: 'tool_use', name, input });
    this.worker({ kind: 'tool_call', call_id: call.id, tool: name, input, ...(call.opaque ? { opaque: true as const } : {}) });
  }

  /** What a tool call came back with: ok or not, its exit code where the runtime says it, its output. */
  toolResult(callId: string | null, ok: boolean, exitCode: number | null, output: string): void {
    this.worker({ kind: 'tool_result', call_id: callId, ok, exit_code: exitCode, output: clipOutput(output) });
  }

  /** The runtime said how many tokens the conversation's context holds. */
  usage(contextTokens: number): void {
    this.on({ kind: 'usage', context_tokens: contextTokens });
  }

  /** What the runtime says a model call or the whole turn used: summed per model over the turn. */
  spend(entries: readonly ModelUsage[]): void {
    this.usageEntries = mergeUsage(this.usageEntries, entries);
  }

  get spent(): ModelUsage[] {
    return this.usageEntries;
  }

  /** The model API failed the turn (reported once: runtimes repeat it, gemini as an error then as the result). */
  fail(message: string): void {
    if (this.failure !== null) return;
    this.failure = message;
    this.on({ kind: 'api_error', message });
  }

  /** The model's usage or rate limit refused the turn: the session parks until it resets. */
  limited(hit: Omit<LimitHit, 'prompt'>): void {
    this.limitHit = hit;
  }

  get limit(): Omit<LimitHit, 'prompt'> | null {
    return this.limitHit;
  }

  /** The runtime said the conversation's context window is exceeded: it cannot go on. */
  contextFull(): void {
    this.overflowed = true;
  }

  /**
   * A problem the runtime may still get over (codex reports each retry of a dropped stream as an `error`, then
   * answers): it fails the turn only if the turn neither answers nor completes after it.
   */
  troubled(message: string): void {
    this.trouble = message;
  }

  completed(): void {
    this.trouble = null;
  }

  /** The turn is over: a message that came as deltas is reported whole, then what the turn used. */
  ended(): void {
    this.flush();
    if (this.usageEntries.length > 0) this.on({ kind: 'turn_usage', entries: this.usageEntries, ...(this.cumulativeUsage ? { cumulative: true as const } : {}) });
  }

  get lastText(): string | null {
    return this.text;
  }

  get failureReason(): string | null {
    return this.failure ?? this.trouble;
  }

  get contextExceeded(): boolean {
    return this.overflowed;
  }

  /** The brain sees the agent's last message, or why the turn went wrong. */
  result(runtime: string, code: number | null, signal: string | null): string | null {
    const failure = this.failureReason;
    if (failure !== null) return clipToTextLimit(`${runtime} turn failed: ${failure}`);
    if (this.text !== null) return clipToTextLimit(this.text);
    if (signal !== null || code !== 0) return `${runtime} exited with ${signal ?? `code ${code}`} before answering`;
    return null;
  }

  private flush(): void {
    if (!this.streamed || this.text === null) return;
    this.streamed = false;
    this.on({ kind: 'text', text: this.text });
  }
}

/** A runtime's headless protocol: how a turn is started, and what its output lines mean. */
export interface TurnProtocol {
  readonly runtime: string;
  readonly executable: string;
  /** Arguments of one turn's process; its prompt goes on stdin (argv caps one argument at 128 KiB). */
  args(spec: Pick<LaunchSpec, 'args' | 'profile_args' | 'sandbox'>, threadId: string | null): string[];
  /** Reads one JSON line into the turn; returns the thread id the line announces, if it does. */
  read(event: OutputEvent, turn: Turn): string | null;
  /** What the runtime prints (on stderr) when the thread to resume is unknown, before it exits. */
  readonly resumeRefused: string;
  /** Its usage reports are the thread's running total, not the turn's (codex exec resume). */
  readonly cumulativeUsage?: true;
}

/** The model a turn's command line names, for runtimes whose usage names none (codex, opencode). */
export const turnModel = (spec: Pick<LaunchSpec, 'args' | 'profile_args'>): string | null => modelInArgs([...spec.profile_args, ...spec.args]);

/**
 * A conversation with an agent that runs one process per turn and continues a thread by id. Between turns
 * nothing runs. A message sent during a turn waits for it to end and goes in the next one, so the session sees
 * one turn end, not two. The turn ends when its process exits. Each turn end names its turn: a message that
 * reaches an idle conversation before the session applied the last turn's end starts a newer one, and the
 * session then knows that end is superseded.
 */
class TurnConversation implements WorkerHandle {
  readonly attachment = 'attached' as const;
  private proc: WorkerProcess | null = null;
  private queued: string[] = [];
  private stopping = false;
  private ended = false;
  /** Let go by a service shutting down: what the turn does next is no longer ours to report. */
  private released = false;
  private turns = 0;
  /** A next turn waits for the service to act on what the last one reported (its usage may hold the session). */
  private gated = false;
  /** The turn process being interrupted: its end is reported as an interrupted turn, and the conversation goes on. */
  private interrupted: WorkerProcess | null = null;

  constructor(
    private readonly protocol: TurnProtocol,
    private readonly spec: LaunchSpec,
    private readonly runner: ProcessRunner,
    private readonly sink: RuntimeSink,
    private threadId: string | null,
  ) {}

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  get startTime(): string | null {
    return this.proc?.startTime ?? null;
  }

  get turnsStarted(): number {
    return this.turns;
  }

  canReceive(): boolean {
    return !this.ended && !this.stopping;
  }

  send(text: string): void {
    if (this.proc || this.gated) this.queued.push(text);
    else this.runTurn(text);
  }

  resolvePermission(): void {
    // Headless turns ask no permissions: the runtime's own approval settings decide.
  }

  /** Any signal from the service ends the conversation: a running turn gets it, an idle one ends at once. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.ended) return false;
    this.stopping = true;
    this.queued = [];
    if (this.proc?.pid != null) return this.runner.signalGroup(this.proc.pid, signal);
    this.end(null, null, null);
    return false;
  }

  /**
   * Ends the turn under way (SIGINT to its process group, as Ctrl-C would, then SIGKILL after INTERRUPT_GRACE_MS) and
   * drops the messages waiting for the next turn; the conversation goes on from its thread at the next message.
   */
  interrupt(): boolean {
    const proc = this.proc;
    this.queued = [];
    if (this.ended || proc?.pid == null) return false;
    this.interrupted = proc;
    const pid = proc.pid;
    const kill = setTimeout(() => this.proc === proc && this.runner.signalGroup(pid, 'SIGKILL'), INTERRUPT_GRACE_MS);
    kill.unref();
    return this.runner.signalGroup(pid, 'SIGINT');
  }

  release(): void {
    this.released = true;
    if (!this.proc) return;
    this.proc.stdin.destroy();
    this.proc.stdout.destroy();
    this.proc.stderr.destroy();
  }

  private runTurn(text: string): void {
    const args = this.protocol.args(this.spec, this.threadId);
    const proc = this.runner.spawn({ command: this.protocol.executable, args, cwd: this.spec.cwd, env: this.spec.env, sandbox: this.spec.sandbox });
    this.proc = proc;
    this.turns++;
    const turn = new Turn(undefined, (activity) => this.sink.report({ kind: 'activity', activity }));
    turn.model = turnModel(this.spec);
    const lines = new LineSplitter((line) => this.onLine(turn, line), MAX_LINE_CHARS);
    let outputEnded = false;
    let exit: { code: number | null; signal: string | null; error: Error | null } | null = null;
    let drain: NodeJS.Timeout | null = null;
    const finish = () => {
      if (!exit || this.proc !== proc || this.released) return;
      if (drain) clearTimeout(drain);
      this.proc = null;
      // Spent whether the turn answered, failed or was cut off: reported before its end.
      if (turn.spent.length > 0) this.sink.report({ kind: 'usage', entries: turn.spent, ...(this.protocol.cumulativeUsage ? { cumulative: true as const } : {}) });
      this.turnEnded(turn, text, exit.code, exit.signal, exit.error, this.interrupted === proc);
    };
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => {
      this.sink.output(Buffer.from(c));
      lines.push(c);
    });
    proc.stdout.on('close', () => {
      outputEnded = true;
      finish();
    });
    proc.stderr.on('data', (c: Buffer) => this.sink.output(c));
    proc.onExit((code, signal, error) => {
      exit = { code, signal, error };
      if (outputEnded || error) finish();
      else (drain = setTimeout(finish, OUTPUT_DRAIN_MS)).unref();
    });
    proc.stdin.end(text);
  }

  private onLine(turn: Turn, line: string): void {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      return; // Not protocol: it is in the log, nothing more.
    }
    if (!isPlainObject(event)) return;
    const threadId = this.protocol.read(event, turn);
    if (threadId !== null && threadId !== this.threadId) {
      this.threadId = threadId;
      this.sink.report({ kind: 'runtime_session', runtime_session_id: threadId });
    }
  }

  private turnEnded(turn: Turn, text: string, code: number | null, signal: string | null, error: Error | null, interrupted: boolean): void {
    const limit = turn.limit;
    // Refused by the model's limit: the conversation waits for the reset; without a thread yet, its prompt goes again.
    if (limit !== null && !this.stopping && !error && !interrupted) {
      const queued = this.queued.splice(0);
      const prompt = this.threadId === null ? [text, ...queued].join('\n\n') : queued.length > 0 ? [CONTINUE_TEXT, ...queued].join('\n\n') : null;
      this.sink.report({ kind: 'turn_ended', result: turn.result(this.protocol.runtime, code, signal), turn: this.turns, limit: { ...limit, prompt } });
      return;
    }
    // Stopped, unable to start, or failed before a thread existed: there is no conversation to continue.
    if (this.stopping || error || this.threadId === null) {
      this.end(code, signal, error);
      return;
    }
    const result = interrupted ? `${this.protocol.runtime} turn interrupted by Brainstem` : turn.result(this.protocol.runtime, code, signal);
    if (this.queued.length > 0) this.nextTurn(result);
    else this.sink.report({ kind: 'turn_ended', result, turn: this.turns });
  }

  /**
   * Runs the messages that waited for the turn, once the service has acted on what the turn reported: a turn whose
   * usage held the session interrupts the worker, which drops them, and the turn's end is reported instead.
   */
  private nextTurn(result: string | null): void {
    const reported = this.sink.reported?.();
    if (!reported) {
      this.runTurn(this.queued.splice(0).join('\n\n'));
      return;
    }
    this.gated = true;
    void reported.then(() => {
      this.gated = false;
      if (this.ended || this.stopping || this.released) return;
      if (this.queued.length > 0) this.runTurn(this.queued.splice(0).join('\n\n'));
      else this.sink.report({ kind: 'turn_ended', result, turn: this.turns });
    });
  }

  private end(code: number | null, signal: string | null, error: Error | null): void {
    if (this.ended) return;
    this.ended = true;
    this.sink.report({ kind: 'exited', code, signal, spawn_error: error ? error.message : null });
  }
}

/** A runtime whose worker is a TurnConversation speaking `protocol`. */
export class PerTurnRuntime implements SessionRuntime {
  readonly name: string;
  readonly takesCommand = false;
  readonly executable: string;
  readonly processPerTurn = true;

  constructor(
    private readonly protocol: TurnProtocol,
    private readonly runner: ProcessRunner,
  ) {
    this.name = protocol.runtime;
    this.executable = protocol.executable;
  }

  /** Without a prompt nothing runs until the first instruction. */
  startsIdle(hasPrompt: boolean): boolean {
    return !hasPrompt;
  }

  start(spec: LaunchSpec, sink: RuntimeSink): WorkerHandle {
    return new TurnConversation(this.protocol, spec, this.runner, sink, null);
  }

  /**
   * A turn that ran across the restart lost its pipes, and with them its answer: it is ended, and the
   * conversation continues from its thread at the next message (or starts one, if no turn had got that far),
   * unless the session was being stopped (the service then kills what is left itself). Between turns nothing
   * runs, so nothing else was lost.
   */
  recover(spec: RecoverySpec, sink: RuntimeSink): Recovery {
    if (spec.stopping) return null;
    this.runner.signalByEnv(SESSION_ENV, spec.session_id, 'SIGKILL');
    return { handle: new TurnConversation(this.protocol, spec, this.runner, sink, spec.runtime_session_id), resumed: true };
  }
}
