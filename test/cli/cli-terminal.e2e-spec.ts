import { readFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { ServiceProcess, callService, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { Terminal, describeInTerminal } from '../support/tmux';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WORKERS, WorkerReaper } from '../support/workers';

const BIN = resolve(__dirname, '../../bin/brainstem.js');

interface Session {
  id: string;
  alias: string;
  pid: number;
  state: string;
}

/**
 * `brainstem chat` and `brainstem logs -f` as a person runs them: in a real terminal (tmux), typed into with
 * send-keys and read with capture-pane, against the service as a process whose hosted brain is the fake claude.
 */
describeInTerminal('the CLI in a terminal', () => {
  const dir = tempDir('brainstem-tty-');
  const reaper = new WorkerReaper();
  let svc: ServiceProcess;
  let term: Terminal | null = null;

  beforeAll(async () => {
    svc = await startService({
      BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'),
      BRAINSTEM_PROFILES_DIR: join(dir.path, 'profiles'),
      BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent',
      BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code',
      BRAINSTEM_PLUGINS: '',
      PATH: `${FAKE_BIN}${delimiter}${process.env.PATH}`,
    });
  });
  afterEach(() => {
    term?.kill();
    term = null;
  });
  afterAll(async () => {
    reaper.killAll();
    svc.child.kill('SIGTERM');
    await svc.exited;
    dir.remove();
  });

  /** The CLI in a terminal, knowing nothing but the service's URL and the user's token. */
  const cli = (...args: string[]): Terminal =>
    (term = Terminal.start(tempDir('brainstem-term-').path, [process.execPath, BIN, ...args], {
      PATH: dirname(process.execPath),
      HOME: dir.path,
      TERM: 'xterm',
      BRAINSTEM_URL: svc.url,
      BRAINSTEM_API_TOKEN: svc.token,
    }));

  const worker = async (): Promise<Session> => {
    const s = await callService<Session>(svc, 'POST', '/coding-sessions', { command: process.execPath, args: [join(WORKERS, 'node-worker.js')], cwd: dir.path });
    reaper.track(s.pid);
    return s;
  };

  it("chat: sends what is typed and shows the brain's reply; answers a worker's question, refuses and confirms held calls; Ctrl-D leaves", async () => {
    const t = cli('chat');
    await t.waitForScreen((s) => s.includes('chatting with the main brain'), 'the chat to open');

    // When the user types a message
    t.typeLine('hello brain');
    // Then the hosted brain's reply streams in (the fake claude echoes its turn's prompt)
    await t.waitForScreen((s) => /brain: echo: .*\n?hello brain/.test(s), "the brain's reply");

    // When a worker asks a question, it shows with its alias and the number to answer it by
    const w = await worker();
    await callService(svc, 'POST', `/coding-sessions/${w.id}/signals`, { type: 'ask_human', question: 'Which database should I use?' });
    const seq = await t.waitForScreen((s) => new RegExp(`${w.alias} asks \\(#(\\d+)\\): Which database should I use\\?`).exec(s)?.[1], 'the question');
    t.typeLine(`/answer ${seq} use postgres`);
    // Then the answer reaches the worker (it echoes each line it gets)
    await waitFor(async () => (await callService<{ lines: string[] }>(svc, 'GET', `/coding-sessions/${w.id}/output`)).lines.some((l) => l.includes('got: use postgres')), {
      timeoutMs: 30_000,
      what: 'the worker to get the answer',
    });

    // And a second answer to it is refused, the refusal saying who answered it and where; it never reaches the worker
    t.typeLine(`/answer ${seq} use mysql`);
    await t.waitForScreen((s) => /error: 409 question_already_answered: .*the user answered it by the chat's answer_to at/.test(s.replace(/\n/g, '')), 'the refusal of a second answer');
    expect((await callService<{ lines: string[] }>(svc, 'GET', `/coding-sessions/${w.id}/output`)).lines.filter((l) => l.includes('got: use'))).toEqual([expect.stringContaining('got: use postgres')]);

    // And the service's refusal of an answer to no question is shown, and the chat goes on
    t.typeLine('/answer 999999 nobody asked');
    await t.waitForScreen((s) => s.includes('error: 404 question_not_found'), 'the refusal');

    // When the brain asks to stop the worker, the held call shows with its id, and /refuse refuses it
    const brain = { url: svc.url, auth: { authorization: `Bearer ${readFileSync(join(dir.path, 'journal', 'brain-token'), 'utf8').trim()}` } };
    const held = await callService<{ result: { confirmation_id: string } }>(brain, 'POST', '/session-os/main-brain/tools/stop_session', { session: w.alias });
    const id = held.result.confirmation_id;
    await t.waitForScreen((s) => s.includes(`gate (${id}): `), 'the held call');
    t.typeLine(`/refuse ${id} keep it running`);
    await t.waitForScreen((s) => s.includes(`refused ${id}`), 'the refusal to be confirmed');
    expect(await callService(svc, 'GET', `/session-os/main-brain/confirmations/${id}`)).toMatchObject({ status: 'refused', reason: 'keep it running' });
    // And when it asks again, /confirm runs it: the worker is stopped
    const again = (await callService<{ result: { confirmation_id: string } }>(brain, 'POST', '/session-os/main-brain/tools/stop_session', { session: w.alias })).result.confirmation_id;
    await t.waitForScreen((s) => s.includes(`gate (${again}): `), 'the second held call');
    t.typeLine(`/confirm ${again}`);
    await t.waitForScreen((s) => s.includes(`confirmed ${again}`), 'the confirmation');
    expect(await callService(svc, 'GET', `/coding-sessions/${w.id}`)).toMatchObject({ state: 'exited', exit_reason: 'stopped' });

    t.press('C-d');
    expect(await t.exited()).toBe(0);
  });

  it('chat: Ctrl-C leaves it as Ctrl-D does, with what was typed on the line dropped', async () => {
    const t = cli('chat');
    await t.waitForScreen((s) => s.includes('chatting with the main brain'), 'the chat to open');
    t.press('-l', 'half a line');
    t.press('C-c');
    expect(await t.exited()).toBe(0);
    const messages = (await callService<{ messages: Array<{ text: string }> }>(svc, 'GET', '/session-os/main-brain/messages')).messages.map((m) => m.text);
    expect(messages).not.toContain('half a line');
  });

  it("logs -f: shows the output's tail, then each line the worker writes as it writes it, until Ctrl-C", async () => {
    const w = await worker();
    await callService(svc, 'POST', `/coding-sessions/${w.id}/messages`, { text: 'before' });
    await waitFor(async () => (await callService<{ lines: string[] }>(svc, 'GET', `/coding-sessions/${w.id}/output`)).lines.some((l) => l.includes('got: before')), {
      what: 'the first line',
    });
    const t = cli('logs', w.alias, '-f');
    await t.waitForScreen((s) => s.includes('got: before'), 'the tail');

    for (const text of ['first live line', 'second live line']) {
      await callService(svc, 'POST', `/coding-sessions/${w.id}/messages`, { text });
      await t.waitForScreen((s) => s.includes(`got: ${text}`), `"${text}" to be shown`);
    }
    expect(t.screen().indexOf('got: before')).toBeLessThan(t.screen().indexOf('got: first live line'));

    t.press('C-c');
    // Ended by SIGINT, as the shell reports it (128 + 2)
    expect(await t.exited()).toBe(130);
  });
});
