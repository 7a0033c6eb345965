import { openSse } from '../support/sse';
import { supervisionCalls } from '../support/supervision-calls';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * What the brain sees, over HTTP with real command workers: each round's prompt is read as the brain reads it
 * (GET …/rounds, and the rounds stream), and each defect of #48 is a case here.
 */
describe('the round prompt: a true, complete picture taken as the round starts', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '200' }, { listen: true, each: true, beforeClose: () => reaper.killAll() });

  const { req, startWorker } = supervisionCalls(() => t, reaper);
  const signal = (id: string, body: Json) => req('POST', `/coding-sessions/${id}/signals`, body);
  const rounds = async () => (await req('GET', '/session-os/main-brain/rounds')).body.rounds as Json[];
  const roundNo = (n: number) => waitFor(async () => ((await rounds()).length >= n ? (await rounds())[0] : undefined), { what: `round ${n}` });
  const permission = async (w: Json, command: string) => {
    const asked = await signal(w.id, { type: 'permission_request', tool: 'Bash', input: { command } });
    expect(asked.body).toMatchObject({ state: 'pending_authorization' });
    return (await req('GET', `/coding-sessions/${w.id}`)).body.pending.request_id as string;
  };

  it('shows a permission with its tool, its whole input as worker data, its request id and the call that answers it', async () => {
    const w = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    const id = await permission(w, 'npm run migrate -- --force');
    const round = await roundNo(1);
    expect(round.prompt).toContain(`${w.alias} (${w.id}) waits for a permission decision (待授权)`);
    expect(round.prompt).toMatch(new RegExp(`\n    asks to use "Bash" \\(request ${id}\\); its profile's \\d+ deny rules do not match it\n`));
    expect(round.prompt).toContain('    input:\n    ```worker-data\n    {"command":"npm run migrate -- --force"}\n    ```');
    expect(round.prompt).toContain(`    act: resolve_permission {"session":"${w.alias}","request_id":"${id}","decision":"allow"} (or "deny" with a reason)`);
    expect(round.reasons[0]).toMatchObject({ trigger: 'pending_authorization', request_id: id, input: '{"command":"npm run migrate -- --force"}' });
  });

  it('never shows as waiting a permission decided while the round before was in flight: it is listed as resolved, and the decision since that round', async () => {
    const [a, b] = [await startWorker(), await startWorker()];
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await signal(a.id, { type: 'notify_blocked', reason: 'no creds' });
    const first = await roundNo(1);
    // While round 1 is in flight, b asks and the user denies it: b's trigger waits for round 2, its request is gone.
    const id = await permission(b, 'npm publish');
    expect((await req('POST', `/coding-sessions/${b.id}/permission`, { decision: 'deny', reason: 'not now', request_id: id })).status).toBe(200);
    await signal(a.id, { type: 'ask_human', question: 'Which region?' });
    await req('POST', `/session-os/main-brain/rounds/${first.id}/complete`, { summary: 'asked for creds' });
    const second = await roundNo(2);
    expect(second.reasons.map((r: Json) => [r.alias, r.trigger])).toEqual([[a.alias, 'ask_human']]);
    expect(second.prompt).not.toContain(`${b.alias} (${b.id}) waits for a permission decision`);
    expect(second.prompt).toContain(`Resolved before this round started (do not act on them):\n  - ${b.alias} (${b.id}) no longer waits for a permission decision (待授权): working since`);
    expect(second.prompt).toMatch(new RegExp(`Since round ${first.id} \\(what the user and Brainstem did; your own calls are not listed\\):\\n  - \\d\\d:\\d\\d:\\d\\d the user denied ${b.alias}'s request ${id}\\n`));
    // And every supervised session has its line, with its state now.
    expect(second.prompt).toContain(`\n  ${a.alias} (${a.id}) pending_decision since `);
    expect(second.prompt).toContain(`\n  ${b.alias} (${b.id}) working since `);
  });

  it('a round whose every reason was resolved before it could start does not start at all', async () => {
    const [a, b] = [await startWorker(), await startWorker()];
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await signal(a.id, { type: 'notify_blocked', reason: 'no creds' });
    const first = await roundNo(1);
    const id = await permission(b, 'ls');
    await req('POST', `/coding-sessions/${b.id}/permission`, { decision: 'allow', request_id: id });
    await req('POST', `/session-os/main-brain/rounds/${first.id}/complete`, {});
    // Something new after: its round is the second one, so none was spent on b's request.
    await signal(a.id, { type: 'ask_human', question: 'And the port?' });
    const second = await roundNo(2);
    expect(second.reasons.map((r: Json) => r.alias)).toEqual([a.alias]);
    expect(await rounds()).toHaveLength(2);
  });

  it('names the calls that act on each reason, says a question may be answered by the brain, and prints the system reason plainly', async () => {
    const w = await startWorker();
    await signal(w.id, { type: 'ask_human', question: 'sqlite or postgres?' });
    expect((await req('POST', '/session-os/main-brain/messages', { text: '/supervise get the tests green' })).status).toBe(201);
    const round = await roundNo(1);
    expect(round.prompt).not.toContain('- - supervision started');
    expect(round.prompt).toContain('\n  - supervision started\n    act: look at the sessions above and dispatch work toward the goal');
    expect(round.prompt).toContain(`    act: answer with send_to_session {"session":"${w.alias}","text":"…"} when the goal and the facts settle it; else put it to the person with reply_to_human`);
    // The question is named by its seq in the chat, where the user answers it.
    const question = ((await req('GET', '/session-os/main-brain/messages')).body.messages as Json[]).find((m) => m.kind === 'question');
    expect(round.prompt).toContain(`${w.alias} (${w.id}) asked the human a question (chat #${question?.seq})\n    says:\n`);
    expect(round.prompt).toContain('A question a worker put to "the human"\nis yours to answer when the goal and the facts settle it');
    expect(round.prompt).toContain('A call that answers waiting_for_user waits for the person: do not retry it or work around it');
    expect(round.prompt).toContain(`End this round with complete_round {"round_id":"${round.id}","summary":"…"}`);
  });

  it("gives a brain that follows the rounds stream the round's prompt in round.started", async () => {
    const w = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    const stream = await openSse(`${t.url}/api/v1/session-os/main-brain/rounds/stream`, t.auth('main_brain'));
    try {
      await stream.take(1);
      await signal(w.id, { type: 'notify_blocked', reason: 'no creds' });
      const [started] = await stream.take(1, 30_000);
      const body = JSON.parse(started.data) as Json;
      expect(started.event).toBe('round.started');
      expect(body.prompt).toBe((await req('GET', `/session-os/main-brain/rounds/${body.data.round.id}`)).body.prompt);
      expect(body.prompt).toContain(`${w.alias} (${w.id}) is blocked`);
    } finally {
      stream.close();
    }
  });
});
