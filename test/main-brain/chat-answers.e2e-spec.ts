import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

const BASE = '/api/v1/session-os/main-brain';
type Json = Record<string, unknown>;

describe("the main chat: a worker's question, answered by the user", () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({}, { listen: true, beforeClose: () => reaper.killAll() });

  const chat = async () => (await t.inject({ method: 'GET', url: `${BASE}/messages` })).json().messages as Json[];
  const post = (payload: object) => t.inject({ method: 'POST', url: `${BASE}/messages`, payload });

  it('given a worker that asked the human, when the user answers its question in the chat, then the answer reaches that worker', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'report.js')], cwd: tmpdir() } });
    const id = res.json().id as string;
    reaper.track(res.json().pid);
    const asked = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, payload: { type: 'ask_human', question: 'Which region?' }, headers: t.auth({ worker: id }) });
    expect(asked.statusCode).toBe(200);
    const question = await waitFor(async () => (await chat()).find((m) => m.kind === 'question' && m.session_id === id));

    const answered = await post({ text: 'eu-west', answer_to: question.seq });

    expect(answered.statusCode).toBe(201);
    expect(answered.json().message).toMatchObject({ role: 'user', kind: 'message', text: 'eu-west', session_id: id, answer_to: question.seq });
    await waitFor(async () => JSON.stringify((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}/output` })).json()).includes('got: eu-west'));
  });

  it('refuses an answer to a chat message that is not a worker question, naming it', async () => {
    const plain = (await post({ text: 'just a note' })).json().message as Json;
    const res = await post({ text: 'answer', answer_to: plain.seq });
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'question_not_found', message: expect.stringContaining(`answer_to: no worker's question at chat seq ${String(plain.seq)}`) });
    expect((await chat()).some((m) => m.text === 'answer')).toBe(false);
  });

  it('refuses an answer_to that is not a positive integer', async () => {
    const res = await post({ text: 'answer', answer_to: 0 });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toContain('answer_to');
  });
});
