import { Interface, clearLine, createInterface, cursorTo } from 'node:readline';
import type { ChatDelta, ChatMessage } from '../../main-brain/chat.service';
import type { JournalEvent } from '../../journal/journal.port';
import type { SessionStatus } from '../../sessions/session.status';
import { ChatOutput, ChatView } from '../chat-view';
import { CliContext, EXIT } from '../cli-context';
import { CliFailure, ServiceClient, ServiceError } from '../service-client';
import { SseMessage } from '../sse-parser';
import { apiCommand, sessionPath } from './command';

const HISTORY = 20;
const CHAT = '/session-os/main-brain';
const HELP = `type a message and press Enter; the brain's reply streams in.
  /supervise [goal]          turn supervision on with a goal (and run a round now)
  /answer <#> <text>         answer a worker's question (# is the number it shows)
  /confirm <id>              run a held call of the brain (gate cf_…)
  /refuse <id> [reason]      refuse it
  /help, /quit (or Ctrl-D)`;

/** The chat's own commands: a held call decided, a worker's question answered. Other lines (and /supervise) are posted. */
async function command(line: string, api: ServiceClient, view: ChatView): Promise<string | null> {
  const [word, arg = '', ...rest] = line.split(/\s+/);
  const text = rest.join(' ');
  if (word === '/help') return HELP;
  if (word === '/confirm' && arg) {
    const c = await api.call<{ outcome: { ok: boolean; error?: { message?: string } } | null }>('POST', `${CHAT}/confirmations/${encodeURIComponent(arg)}/confirm`);
    return c.outcome?.ok === false ? `confirmed ${arg}; it failed: ${c.outcome.error?.message ?? 'no reason given'}` : `confirmed ${arg}`;
  }
  if (word === '/refuse' && arg) {
    await api.call('POST', `${CHAT}/confirmations/${encodeURIComponent(arg)}/refuse`, text ? { reason: text } : {});
    return `refused ${arg}`;
  }
  if (word === '/answer' && /^\d+$/.test(arg) && text) {
    await post(api, view, text, Number(arg));
    return null;
  }
  if (['/confirm', '/refuse', '/answer'].includes(word)) return `usage: ${HELP.split('\n').find((l) => l.trim().startsWith(word))?.trim()}`;
  await post(api, view, line);
  return null;
}

/** Posts a line the user typed (on screen already, so its echo is skipped), or an answer to a worker's question. */
async function post(api: ServiceClient, view: ChatView, text: string, answerTo?: number): Promise<void> {
  view.sentByMe(text);
  try {
    await api.call('POST', `${CHAT}/messages`, answerTo === undefined ? { text } : { text, answer_to: answerTo });
  } catch (e) {
    view.refused(text);
    throw e;
  }
}

/** One chat: the stream shown in order after the history, the user's lines sent, until they leave or the service goes. */
class TerminalChat {
  private readonly aliases = new Map<string, string>();
  private readonly view = new ChatView((id) => this.aliases.get(id) ?? id);
  private readonly tty: boolean;
  private input: Interface | null = null;
  /** A line left open (the brain typing). */
  private open = false;
  /** Stream messages wait until the history is shown, then are shown one after another (each may wait for an alias). */
  private early: SseMessage[] | null = [];
  private shown: Promise<void> = Promise.resolve();
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly api: ServiceClient,
    private readonly ctx: CliContext,
  ) {
    this.tty = (ctx.stdout as NodeJS.WriteStream).isTTY === true;
  }

  async run(): Promise<number> {
    const stop = new AbortController();
    let opened: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (opened = resolve));
    const streamed = this.api.stream(`${CHAT}/messages/stream`, { message: (m) => this.arrived(m), open: () => opened() }, stop.signal);
    // The stream is open (at the head) before the history is read: nothing falls between the two; seqs dedupe.
    await Promise.race([ready, streamed]);
    const { messages } = await this.api.call<{ messages: ChatMessage[] }>('GET', `${CHAT}/messages?limit=${HISTORY}`);
    const input = createInterface({ input: this.ctx.stdin, output: this.ctx.stdout, terminal: this.tty && (this.ctx.stdin as NodeJS.ReadStream).isTTY === true });
    this.input = input;
    input.setPrompt('> ');
    const left = new Promise<number>((resolve) => input.on('close', () => resolve(EXIT.ok)));
    // Ctrl-C on a terminal: leave, as Ctrl-D does.
    input.on('SIGINT', () => input.close());
    input.on('line', (line) => this.typed(line.trim()));
    for (const m of messages) await this.showMessage(m);
    const early = this.early ?? [];
    this.early = null;
    early.forEach((m) => this.arrived(m));
    this.say(`chatting with the main brain at ${this.api.url}; /help for commands, Ctrl-D to leave`);
    const ended = streamed.then(() => {
      if (stop.signal.aborted) return EXIT.ok;
      throw new CliFailure('the service closed the chat stream (it is shutting down)', EXIT.unreachable);
    });
    try {
      const code = await Promise.race([left, ended]);
      await this.sending;
      return code;
    } finally {
      stop.abort();
      input.close();
      if (this.open) this.ctx.stdout.write('\n');
    }
  }

  private arrived(m: SseMessage): void {
    if (this.early) this.early.push(m);
    else this.shown = this.shown.then(() => this.handle(m));
  }

  private async handle(m: SseMessage): Promise<void> {
    if (m.event === 'chat.delta') this.show(this.view.delta(JSON.parse(m.data) as ChatDelta));
    else if (m.event === 'chat.message') {
      const e = JSON.parse(m.data) as JournalEvent;
      await this.showMessage({ seq: e.seq, at: e.at, ...(e.data as Omit<ChatMessage, 'seq' | 'at'>) });
    }
  }

  /** Workers are named by alias: one not seen yet is looked up first. */
  private async showMessage(m: ChatMessage): Promise<void> {
    if (m.session_id !== null && !this.aliases.has(m.session_id)) {
      const s = await this.api.call<SessionStatus>('GET', sessionPath(m.session_id)).catch(() => null);
      if (s) this.aliases.set(m.session_id, s.alias);
    }
    this.show(this.view.message(m));
  }

  private typed(line: string): void {
    if (line === '') return this.input?.prompt();
    if (line === '/quit' || line === '/exit') return this.input?.close();
    this.sending = this.sending.then(async () => {
      try {
        const reply = await command(line, this.api, this.view);
        if (reply !== null) this.say(reply);
      } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
        this.say(`error: ${e.message}`);
      }
    });
  }

  /** Written over the prompt line, which is drawn again (with what the user has typed so far) once a line ends. */
  private show(o: ChatOutput): void {
    if (o.text === '') return;
    if (this.tty && !this.open) {
      clearLine(this.ctx.stdout, 0);
      cursorTo(this.ctx.stdout, 0);
    }
    this.ctx.stdout.write(o.text);
    this.open = o.open;
    if (!this.open) this.input?.prompt(true);
  }

  /** A line of the chat itself (a reply to a command, an error), ending a line the brain left open. */
  private say(text: string): void {
    if (this.open) {
      this.ctx.stdout.write('\n');
      this.open = false;
      this.view.interrupt();
    }
    this.show({ text: `${text}\n`, open: false });
  }
}

export const chatCommand = apiCommand({
  name: 'chat',
  synopsis: '',
  summary: "talk with the main brain: your lines are sent, its replies stream in (and workers' questions, the gate's calls)",
  run: (_p, api, ctx) => new TerminalChat(api, ctx).run(),
});
