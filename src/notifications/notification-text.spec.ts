import { Notice } from './notification-rules';
import { SessionInfo, compose } from './notification-text';
import { WaitingItem, signalsOf } from './notification-triggers';
import { brainstemBody, slackBody } from './channels/webhook.channel';
import { ntfyBody } from './channels/ntfy.channel';
import { OutgoingNotification } from './channels/notification-channel.port';
import { pushPayload } from './channels/web-push.channel';

const T0 = Date.UTC(2025, 0, 6, 12, 0, 0);
const w1: SessionInfo = { id: 'cs_a', alias: 'w1', title: 'Fix the login', runtime: 'claude-code' };
const lookup = (id: string) => (id === 'cs_a' ? w1 : null);

function itemOf(type: string, data: Record<string, unknown>, stream = 'session-cs_a', seq = 1): WaitingItem {
  const [signal] = signalsOf({ type, stream, at: new Date(T0).toISOString(), seq, data });
  if (signal?.type !== 'wait') throw new Error(`${type} did not make a wait`);
  return signal.item;
}

const notice = (items: WaitingItem[], over: Partial<Notice> = {}): Notice => ({ key: 'cs_a', digest: false, items, at: T0, ...over });

describe('what a notification says', () => {
  it('says the workers parked at a limit in one notice: how many, until when, and that they resume by themselves', () => {
    const parked = (stream: string) => itemOf('session.parked', { reason: 'usage_limit', resumes_at: Date.UTC(2025, 0, 6, 4, 10), source: 'runtime', attempt: 1 }, stream);
    const one = compose(notice([parked('session-cs_a')], { key: 'limit' }), lookup);
    expect(one).toMatchObject({ kind: 'limit', title: 'w1 paused until 04:10 UTC (usage limit)', text: 'w1: it resumes by itself at the reset', card: '#/', actions: [] });
    const five = compose(notice([parked('session-cs_a'), ...['cs_b', 'cs_c', 'cs_d', 'cs_e'].map((id) => parked(`session-${id}`))], { key: 'limit' }), lookup);
    expect(five.title).toBe('5 workers paused until 04:10 UTC (usage limit)');
    expect(five.text).toBe('w1, cs_b, cs_c, cs_d, cs_e: they resume by themselves at the reset');
    expect(signalsOf({ type: 'session.unparked', stream: 'session-cs_a', at: new Date(T0).toISOString(), seq: 2, data: { by: 'timer' } })).toEqual([{ type: 'settle', item: 'limit:cs_a' }]);
  });

  it('names the session (alias, title, runtime), the permission with its command, links to its card, and offers Allow and Deny', () => {
    const c = compose(notice([itemOf('session.permission_requested', { request_id: 'perm_1', tool: 'Bash', input: { command: 'npm test' } })]), lookup);
    expect(c).toMatchObject({ kind: 'permission', title: 'w1 wants to use Bash', card: '#/?session=cs_a', session: w1 });
    expect(c.text).toBe('Session w1 · Fix the login · claude-code\nPermission for Bash: npm test');
    expect(c.actions.map((a) => [a.action, a.target])).toEqual([
      ['allow', { kind: 'permission', session_id: 'cs_a', request_id: 'perm_1' }],
      ['deny', { kind: 'permission', session_id: 'cs_a', request_id: 'perm_1' }],
    ]);
  });

  it('names the file of a file permission', () => {
    const c = compose(notice([itemOf('session.permission_requested', { request_id: 'p', tool: 'Write', input: { file_path: '/src/a.ts', content: 'x' } })]), lookup);
    expect(c.text).toContain('Permission for Write: file /src/a.ts');
  });

  it.each([
    ['session.asked_human', { question: 'Which database?' }, 'w1 asks you a question', 'Question: Which database?'],
    ['session.blocked', { reason: 'no network' }, 'w1 is blocked', 'Blocked: no network'],
    ['session.progress', { status: 'blocked', message: 'tests hang' }, 'w1 is blocked', 'Blocked: tests hang'],
  ])('says why: %s', (type, data, title, why) => {
    const c = compose(notice([itemOf(type, data)]), lookup);
    expect(c.title).toBe(title);
    expect(c.text.split('\n')[1]).toBe(why);
    expect(c.actions).toEqual([]);
  });

  it('says why for a stall, and for the kinds whose events come later (loop, budget)', () => {
    const stall = itemOf('supervision.stall_detected', { session_id: 'cs_a', kind: 'pending_authorization', stalled_for_s: 960, cooldown_until: 0 }, 'supervision');
    expect(compose(notice([stall]), lookup).text).toContain('Stalled (pending_authorization): waiting for 16 min');
    const base = { item: 'x', session_id: 'cs_a', target: null, subject: null, at: T0 };
    expect(compose(notice([{ ...base, kind: 'loop', detail: 'ran the same command 12 times' }]), lookup).title).toBe('w1 seems to be looping');
    expect(compose(notice([{ ...base, kind: 'budget', detail: '90% of its tokens used' }]), lookup).text).toContain('Budget: 90% of its tokens used');
  });

  it("says the brain asks, and offers Confirm and Refuse for the gate's confirmation, linking to it in the chat", () => {
    const ask = itemOf('chat.message', { role: 'brain', kind: 'message', text: 'Shall I merge?', session_id: null }, 'chat', 42);
    expect(compose(notice([ask], { key: 'main-brain' }), lookup)).toMatchObject({ title: 'The main brain asks you', text: 'The main brain\nThe main brain asks: Shall I merge?', card: '#/chat' });
    const gate = itemOf('confirmation.requested', { id: 'cf_1', tool: 'delete_profile', description: 'Delete profile x', requested_by: 'main_brain', args: {} }, 'confirmations');
    const c = compose(notice([gate], { key: 'main-brain' }), lookup);
    expect(c).toMatchObject({ title: 'The main brain waits for your confirmation (delete_profile)', card: '#/chat?confirmation=cf_1' });
    expect(c.actions.map((a) => a.label)).toEqual(['Confirm', 'Refuse']);
  });

  it("does not take the brain's replies within its turns, nor the person's own messages, as questions", () => {
    expect(signalsOf({ type: 'chat.message', stream: 'chat', at: '', seq: 1, data: { role: 'brain', kind: 'message', text: 'x', turn_id: 't1' } })).toEqual([]);
    expect(signalsOf({ type: 'chat.message', stream: 'chat', at: '', seq: 2, data: { role: 'user', kind: 'message', text: 'x' } })).toEqual([{ type: 'settle_kind', kind: 'brain_question' }]);
  });

  it('merges a burst into one text listing each thing, and a digest names each session', () => {
    const items = [1, 2, 3].map((n) => itemOf('session.permission_requested', { request_id: `perm_${n}`, tool: 'Bash', input: { command: `step ${n}` } }));
    const merged = compose(notice(items), lookup);
    expect(merged.title).toBe('w1: 3 things wait on you');
    expect(merged.text.split('\n')).toEqual(['Session w1 · Fix the login · claude-code', 'Permission for Bash: step 1', 'Permission for Bash: step 2', 'Permission for Bash: step 3']);
    expect(merged.actions[0].target).toMatchObject({ request_id: 'perm_1' });
    const digest = compose({ key: 'digest', digest: true, items: [items[0], itemOf('session.blocked', { reason: 'x' }, 'session-cs_b')], at: T0 }, lookup);
    expect(digest).toMatchObject({ kind: 'digest', title: '2 things wait on you', card: '#/', actions: [] });
    expect(digest.text.split('\n')).toEqual(['w1: Permission for Bash: step 1', 'cs_b: Blocked: x']);
  });

  it("keeps a worker's text on one line and bounded", () => {
    const c = compose(notice([itemOf('session.asked_human', { question: `line one\nline two ${'x'.repeat(1000)}` })]), lookup);
    const [, why] = c.text.split('\n');
    expect(c.text.split('\n')).toHaveLength(2);
    expect(why.startsWith('Question: line one line two')).toBe(true);
    expect(why.length).toBeLessThanOrEqual(300);
  });
});

describe('what each channel sends', () => {
  const n: OutgoingNotification = {
    id: 'nt_1',
    kind: 'permission',
    key: 'cs_a',
    session: w1,
    title: 'w1 wants to use Bash',
    text: 'Session w1\nPermission for Bash: echo <b>&</b>',
    url: 'https://me.example/#/?session=cs_a',
    actions: [{ action: 'allow', label: 'Allow', url: 'https://me.example/api/v1/notifications/actions/bsa_x.y', method: 'POST', page_url: 'https://me.example/action.html#bsa_x.y' }],
  };

  it('the webhook: {kind, session, text, url, actions: [{label, url, method}]}, Open last', () => {
    expect(brainstemBody(n)).toMatchObject({ kind: 'permission', session: w1, text: n.text, url: n.url, actions: [{ label: 'Allow', url: n.actions[0].url, method: 'POST' }, { label: 'Open', url: n.url, method: 'GET' }] });
  });

  it("Slack's shape: plain_text blocks, escaped fallback text, buttons opening the page that asks before it acts", () => {
    const body = slackBody(n) as { text: string; blocks: Array<{ type: string; text?: { type: string; text: string }; elements?: Array<{ url: string }> }> };
    expect(body.text).toContain('echo &lt;b&gt;&amp;&lt;/b&gt;');
    expect(body.blocks.filter((b) => b.text).every((b) => b.text?.type === 'plain_text')).toBe(true);
    expect(body.blocks[2].elements?.map((e) => e.url)).toEqual([n.actions[0].page_url, n.url]);
  });

  it('ntfy: the topic, a high priority for a permission, the card as click, http buttons and Open, three at most', () => {
    const body = ntfyBody('t', { ...n, actions: [n.actions[0], { ...n.actions[0], action: 'deny', label: 'Deny' }, { ...n.actions[0], label: 'Extra' }] });
    expect(body).toMatchObject({ topic: 't', priority: 4, click: n.url, message: n.text });
    expect((body.actions as Array<{ label: string }>).map((a) => a.label)).toEqual(['Allow', 'Deny', 'Extra']);
    expect(ntfyBody('t', { ...n, kind: 'stall', actions: [] })).toMatchObject({ priority: 3, actions: [{ action: 'view', label: 'Open', url: n.url }] });
  });

  it('Web Push: a payload within a push message, the text cut to fit', () => {
    const big = pushPayload({ ...n, text: 'y'.repeat(10_000) });
    expect(Buffer.byteLength(JSON.stringify(big))).toBeLessThanOrEqual(3600);
    expect(big).toMatchObject({ tag: 'cs_a', title: n.title, actions: [{ action: 'allow', label: 'Allow', url: n.actions[0].url }] });
  });
});
