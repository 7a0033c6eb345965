import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { call, httpClient } from '../mcp/mcp-client';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

const BASE = '/api/v1/session-os/main-brain';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A worker's question is answered once, over HTTP and MCP on a real LevelDB journal and a real worker process: the
 * first message that reaches the worker from a person answers it, whichever path it came by, and shows in the chat
 * beside the question; a later answer_to is refused naming who answered, and nothing more reaches the worker.
 */
describe("a worker's question is answered once", () => {
  const reaper = new WorkerReaper();
  const clients: Client[] = [];
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    reaper.killAll();
    await Promise.allSettled(apps.splice(0).map((a) => a.close()));
  });

  const start = async (env: Record<string, string> = {}) => {
    const t = await startTestApp(env, { listen: true });
    apps.push(t);
    return t;
  };
  const chat = async (t: TestApp) => (await t.inject({ method: 'GET', url: `${BASE}/messages` })).json().messages as Json[];
  const answerTo = (t: TestApp, seq: number, text: string) => t.inject({ method: 'POST', url: `${BASE}/messages`, payload: { text, answer_to: seq } });
  /** What reached the worker: the messages its session journaled as dispatched. */
  const dispatched = async (t: TestApp, id: string) =>
    ((await t.inject({ method: 'GET', url: `/api/v1/journal/events?stream=session-${id}&type=session.message_dispatched` })).json().events as Json[]).map((e) => e.data.text as string);
  const output = async (t: TestApp, id: string) => JSON.stringify((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}/output` })).json());

  /** A worker that echoes every line it is sent (`got: <line>`), and the question it asked the human, as the chat shows it. */
  const asking = async (t: TestApp, question: string): Promise<{ id: string; question: Json }> => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'node-worker.js')], cwd: tmpdir() } });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as string;
    reaper.track(res.json().pid);
    await waitFor(async () => (await output(t, id)).includes(`worker ${id} up`), { what: 'the worker to start' });
    const asked = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, payload: { type: 'ask_human', question }, headers: t.auth({ worker: id }) });
    expect(asked.statusCode).toBe(200);
    return { id, question: await waitFor(async () => (await chat(t)).find((m) => m.kind === 'question' && m.session_id === id), { what: 'the question in the chat' }) };
  };

  it("given the brain answered with send_to_session, then the chat shows its answer beside the question, and each later answer_to is refused naming the main brain; the worker got the one answer", async () => {
    const t = await start();
    const { id, question } = await asking(t, 'Which database?');
    expect(question.answered).toBeNull();

    const brain = await httpClient(t.url, { token: t.tokenOf('main_brain') });
    clients.push(brain);
    const sent = await call(brain, 'send_to_session', { session: id, text: 'postgres' });
    expect(sent.isError).toBe(false);

    const first = await answerTo(t, question.seq, 'sqlite');
    const second = await answerTo(t, question.seq, 'mysql');

    const answer = (await chat(t)).find((m) => m.answer_to === question.seq) as Json;
    expect(answer).toMatchObject({ role: 'brain', kind: 'message', text: 'postgres', session_id: id, answer_to: question.seq, via: 'send_to_session' });
    for (const refused of [first, second]) {
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({
        code: 'question_already_answered',
        message: expect.stringContaining(`the main brain answered it by send_to_session at ${answer.at as string} (chat seq ${answer.seq as number})`),
        details: { question_seq: question.seq, session_id: id, answered_by: 'main_brain', via: 'send_to_session', answered_at: answer.at, answer_seq: answer.seq },
      });
    }
    expect(first.json().details.answered_at).toMatch(ISO);
    const listed = await chat(t);
    expect(listed.find((m) => m.seq === question.seq)).toMatchObject({ answered: { by: 'main_brain', via: 'send_to_session', at: answer.at, seq: answer.seq } });
    expect(listed.filter((m) => m.answer_to === question.seq)).toHaveLength(1);
    await waitFor(async () => (await output(t, id)).includes('got: postgres'), { what: "the brain's answer to reach the worker" });
    expect(await dispatched(t, id)).toEqual(['postgres']);
  });

  it('given the user answered with answer_to, then a second answer_to is refused naming the user and the chat, and only the first reached the worker', async () => {
    const t = await start();
    const { id, question } = await asking(t, 'Which region?');

    const first = await answerTo(t, question.seq, 'eu-west');
    expect(first.statusCode).toBe(201);
    const answer = first.json().message as Json;
    expect(answer).toMatchObject({ role: 'user', session_id: id, answer_to: question.seq, via: 'chat' });
    const second = await answerTo(t, question.seq, 'us-east');

    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({
      code: 'question_already_answered',
      message: expect.stringContaining(`the user answered it by the chat's answer_to at ${answer.at as string} (chat seq ${answer.seq as number})`),
      details: { answered_by: 'user', via: 'chat', answered_at: answer.at, answer_seq: answer.seq },
    });
    expect((await chat(t)).find((m) => m.seq === question.seq)?.answered).toEqual({ by: 'user', via: 'chat', at: answer.at, seq: answer.seq });
    await waitFor(async () => (await output(t, id)).includes('got: eu-west'), { what: 'the answer to reach the worker' });
    expect(await dispatched(t, id)).toEqual(['eu-west']);
  });

  it("given the user answered by the dashboard's reply (a message to the session), then the chat shows it as the answer, and answer_to is refused naming that path", async () => {
    const t = await start();
    const { id, question } = await asking(t, 'Which port?');

    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text: '8080' } })).statusCode).toBe(200);
    const refused = await answerTo(t, question.seq, '9090');

    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'question_already_answered', details: { answered_by: 'user', via: 'session_messages' } });
    expect((await chat(t)).filter((m) => m.answer_to === question.seq)).toEqual([expect.objectContaining({ role: 'user', text: '8080', via: 'session_messages' })]);
    expect(await dispatched(t, id)).toEqual(['8080']);
  });

  it('given a question answered longer ago than the chat the service reads at boot, then after a restart answer_to still finds who answered it', async () => {
    const data = tempDir('brainstem-answered-long-ago-');
    const dirs = { BRAINSTEM_JOURNAL_DIR: join(data.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(data.path, 'profiles') };
    try {
      const first = await start(dirs);
      const { id, question } = await asking(first, 'Which database?');
      const brain = await httpClient(first.url, { token: first.tokenOf('main_brain') });
      clients.push(brain);
      expect((await call(brain, 'send_to_session', { session: id, text: 'postgres' })).isError).toBe(false);
      const answer = await waitFor(async () => (await chat(first)).find((m) => m.answer_to === question.seq), { what: "the brain's answer in the chat" });
      // More chat since than the 2000 messages read at boot: the question and its answer are both before them.
      for (let i = 0; i < 2001; i++) expect((await first.inject({ method: 'POST', url: `${BASE}/messages`, payload: { text: `note ${i}` } })).statusCode).toBe(201);
      await Promise.allSettled(clients.splice(0).map((c) => c.close()));
      await apps.splice(0)[0].close();

      const second = await start(dirs);
      expect((await chat(second)).some((m) => m.seq === question.seq)).toBe(false);
      expect((await answerTo(second, question.seq, 'mysql')).json()).toMatchObject({
        statusCode: 409,
        code: 'question_already_answered',
        details: { answered_by: 'main_brain', via: 'send_to_session', answered_at: answer.at, answer_seq: answer.seq },
      });
    } finally {
      await Promise.allSettled(apps.splice(0).map((a) => a.close()));
      data.remove();
    }
  }, 120_000);

  it('given a question answered and a second one asked, then after a restart the first is still answered (refused, listed so) and the second still open to answer', async () => {
    const data = tempDir('brainstem-answered-restart-');
    const dirs = { BRAINSTEM_JOURNAL_DIR: join(data.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(data.path, 'profiles') };
    try {
      const first = await start(dirs);
      const { id, question } = await asking(first, 'Which database?');
      expect((await answerTo(first, question.seq, 'postgres')).statusCode).toBe(201);
      const again = await first.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, payload: { type: 'ask_human', question: 'Which version?' }, headers: first.auth({ worker: id }) });
      expect(again.statusCode).toBe(200);
      const newer = await waitFor(async () => (await chat(first)).find((m) => m.kind === 'question' && m.text === 'Which version?'), { what: 'the second question' });
      await apps.splice(0)[0].close();

      const second = await start(dirs);
      const listed = await chat(second);
      expect(listed.find((m) => m.seq === question.seq)?.answered).toMatchObject({ by: 'user', via: 'chat' });
      expect(listed.find((m) => m.seq === newer.seq)?.answered).toBeNull();
      expect((await answerTo(second, question.seq, 'mysql')).json()).toMatchObject({ statusCode: 409, code: 'question_already_answered', details: { answered_by: 'user' } });
      // The second is open: its answer is not refused as answered (whether the worker, detached by the restart, takes it is its session's to say).
      expect((await answerTo(second, newer.seq, '16')).json().code).not.toBe('question_already_answered');
    } finally {
      await Promise.allSettled(apps.splice(0).map((a) => a.close()));
      data.remove();
    }
  });
});
