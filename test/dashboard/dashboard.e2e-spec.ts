import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Page } from 'playwright-core';
import { ChatService } from '../../src/main-brain/chat.service';
import { ToolRegistry } from '../../src/main-brain/tool-registry';
import { SessionsService } from '../../src/sessions/sessions.service';
import { DASHBOARD_CSP } from '../../src/dashboard/dashboard.static';
import { tempDir } from '../support/temp-dir';
import { TestApp } from '../support/test-app';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { openSse } from '../support/sse';
import { WORKERS, WorkerReaper } from '../support/workers';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

type Status = { id: string; alias: string; state: string; pending: { kind: string; request_id?: string } | null };

/** All browser specs share one Chromium, one page at a time: the machine has two cores. */
describeInBrowser('the dashboard in Chromium', () => {
  const cwd = tempDir('brainstem-dash-cwd-');
  const reaper = new WorkerReaper();
  const harness = dashboardHarness();
  let t: TestApp;
  let page: Page;
  beforeEach(() => ({ t, page } = harness));
  afterEach(() => reaper.killAll());
  afterAll(() => cwd.remove());

  const status = async (id: string): Promise<Status> => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json() as Status;

  /** A command worker that sends one signal once it is up. */
  async function startSignalling(app: TestApp, signal: object, title: string): Promise<Status> {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/coding-sessions',
      payload: { command: process.execPath, args: [join(WORKERS, 'signals-once.js'), JSON.stringify(signal)], cwd: cwd.path, title },
    });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json() as Status;
  }
  const startAsking = (tool: string, input: object): Promise<Status> => startSignalling(t, { type: 'permission_request', tool, input }, `asks for ${tool}`);

  describe('the token prompt', () => {
    it('Given the page, When a wrong token and then the right one are pasted, Then only the right one opens it and it is kept in sessionStorage only', async () => {
      const csp: string[] = [];
      page.on('response', (r) => {
        if (r.url() === `${t.url}/`) csp.push(r.headers()['content-security-policy'] ?? '');
      });
      await page.goto(`${t.url}/`);
      expect(csp).toEqual([DASHBOARD_CSP]);
      const prompt = page.getByLabel('API token');
      await prompt.fill('not-a-token');
      await page.getByRole('button', { name: 'Open the dashboard' }).click();
      await page.getByRole('alert').filter({ hasText: 'That token was refused.' }).waitFor();
      await prompt.fill(t.tokenOf('main_brain'));
      await page.getByRole('button', { name: 'Open the dashboard' }).click();
      await page.getByRole('alert').filter({ hasText: "not the user's token" }).waitFor();
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
      await screenshot(page, 'token-prompt-refused');

      await prompt.fill(t.token);
      await page.getByRole('button', { name: 'Open the dashboard' }).click();
      await page.getByRole('heading', { name: /Needs attention/ }).waitFor();
      // Evaluated as text: the page's globals are not in the Node test's types.
      const stored = await page.evaluate('({ session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie, url: location.href })');
      expect(stored).toEqual({ session: [t.token], local: 0, cookie: '', url: `${t.url}/` });
      expect((await page.context().cookies()).length).toBe(0);

      // A reload of the tab keeps it; a new tab asks again.
      await page.reload();
      await page.getByRole('heading', { name: /Needs attention/ }).waitFor();
      const other = await page.context().newPage();
      await other.goto(`${t.url}/`);
      await other.getByLabel('API token').waitFor();
      await other.close();
    });
  });

  describe('the attention queue', () => {
    it('Given the page is open, When a worker asks to run a command, Then its card appears live and Allow lets the session move on', async () => {
      const requests: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/api/')) requests.push(r.url());
      });
      await signIn(page, t.url, t.token);
      await page.getByText('Nothing waits on you.').waitFor();
      await page.getByText('live', { exact: true }).waitFor();

      const s = await startAsking('Bash', { command: 'npm test -- --watch=false', description: 'Run the tests' });
      const card = page.locator(`[data-session="${s.id}"]`);
      await card.getByLabel('command').filter({ hasText: 'npm test -- --watch=false' }).waitFor();
      await waitFor(async () => (await page.title()) === '(1) Brainstem', { what: 'the count in the tab title' });
      await card.getByText('待授权').waitFor();
      const requestId = (await status(s.id)).pending?.request_id;
      expect(requestId).toBeDefined();
      expect(await card.locator('.permission').getAttribute('data-request-id')).toBe(requestId);
      await screenshot(page, 'attention-permission');

      await card.getByRole('button', { name: 'Allow Bash' }).click();
      await waitFor(async () => (await status(s.id)).state === 'working', { what: 'the session to move on' });
      await page.getByText('Nothing waits on you.').waitFor();
      await waitFor(async () => (await page.title()) === 'Brainstem', { what: 'the count to leave the tab title' });
      const resolved = (await t.inject({ method: 'GET', url: `/api/v1/journal/events?stream=session-${s.id}&type=session.permission_resolved` })).json();
      expect(resolved.events.map((e: { data: { request_id: string; decision: string } }) => [e.data.request_id, e.data.decision])).toEqual([[requestId, 'allow']]);
      // The token never travels in a URL.
      expect(requests.filter((u) => u.includes(t.token))).toEqual([]);
    });

    it('Given a worker that keeps reporting the same block, When the loop is detected and then the session held, Then its card says so, its evidence as text, and Release releases it', async () => {
      await signIn(page, t.url, t.token);
      const created = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { command: process.execPath, args: [join(WORKERS, 'interruptible.js')], cwd: cwd.path, title: 'blocked again' } });
      expect(created.statusCode).toBe(201);
      reaper.track(created.json().pid);
      const { id, alias } = created.json() as Status;
      // The command runtime's signals are what its loop detector reads: the same block, five times in a row.
      for (let i = 0; i < 5; i++) {
        const sent = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, headers: t.auth({ worker: id }), payload: { type: 'notify_blocked', reason: 'cannot find <b>fixtures</b>' } });
        expect(sent.statusCode).toBe(200);
      }
      const card = page.locator(`[data-session="${id}"]`);
      await card.getByText('going round in circles · repeated call').waitFor();
      await card.getByText('the same tool call with the same arguments 5 times in a row', { exact: false }).waitFor();
      await card.getByText('What it tried and what came back').click();
      expect(await card.locator('pre.evidence').textContent()).toContain('notify_blocked {"reason":"cannot find <b>fixtures</b>"}');
      expect(await card.locator('pre.evidence b').count()).toBe(0);

      await t.app.get(SessionsService).hold(id, 'loop', 'repeated_call after 3 wake-ups of the main brain');
      await card.getByText('repeated_call after 3 wake-ups of the main brain').waitFor();
      // A command worker's turn is interrupted with SIGINT: this one stops its job and lives on.
      await waitFor(async () => ((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}/output` })).json().lines.includes('interrupted: the current job stopped') ? true : undefined), { what: 'the worker interrupted' });
      expect((await status(id)).state).not.toBe('exited');
      await screenshot(page, 'attention-loop-held');
      await card.getByRole('button', { name: `Release ${alias}` }).click();
      await waitFor(async () => ((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json().held === null ? true : undefined), { what: 'the session released' });
      await card.getByRole('button', { name: `Release ${alias}` }).waitFor({ state: 'detached' });
    });

    it('Given two requests waiting, When one is denied from the keyboard with a reason, Then exactly that one is denied and the other stays', async () => {
      await signIn(page, t.url, t.token);
      const write = await startAsking('Write', { file_path: `${cwd.path}/notes.md`, content: '# Notes\n<script>alert(1)</script>' });
      // The Write waits first (workers start at their own pace), so it is the older request.
      await waitFor(async () => (await status(write.id)).state === 'pending_authorization', { what: 'the Write request' });
      const bash = await startAsking('Bash', { command: 'git push origin main' });
      await page.locator(`[data-session="${bash.id}"] .permission`).waitFor();
      await page.locator(`[data-session="${write.id}"] .permission`).waitFor();
      await waitFor(async () => (await page.title()) === '(2) Brainstem', { what: 'two in the tab title' });
      const writeCard = page.locator(`[data-session="${write.id}"]`);
      // The file path and the content to be written, as text: the markup in it is shown, not run.
      await writeCard.getByText(`${cwd.path}/notes.md`).waitFor();
      expect(await writeCard.getByLabel('content written').textContent()).toBe('# Notes\n<script>alert(1)</script>');
      await screenshot(page, 'attention-two-requests');

      // Oldest first: j focuses the first card (the Write request).
      await page.keyboard.press('j');
      expect(await page.evaluate("document.activeElement?.getAttribute('data-request-id')")).toBe((await status(write.id)).pending?.request_id);
      await page.keyboard.press('j');
      const bashRequest = (await status(bash.id)).pending?.request_id;
      expect(await page.evaluate("document.activeElement?.getAttribute('data-request-id')")).toBe(bashRequest);
      await page.keyboard.press('d');
      // The reason field opens for the request denied; the reason is typed into it (focused first: typing into whatever
      // held the focus while it rendered lost the first keys once).
      const reasonField = page.getByLabel('Reason for denying');
      await reasonField.waitFor();
      await reasonField.focus();
      await page.keyboard.type('no pushes yet');
      await screenshot(page, 'attention-deny-reason');
      await page.keyboard.press('Enter');

      await waitFor(async () => (await status(bash.id)).state === 'working', { what: 'the denied session to move on' });
      await page.locator(`[data-session="${bash.id}"]`).waitFor({ state: 'detached' });
      expect((await status(write.id)).state).toBe('pending_authorization');
      const resolved = (await t.inject({ method: 'GET', url: `/api/v1/journal/events?stream=session-${bash.id}&type=session.permission_resolved` })).json();
      expect(resolved.events.map((e: { data: object }) => e.data)).toEqual([expect.objectContaining({ request_id: bashRequest, decision: 'deny', reason: 'no pushes yet' })]);
      await waitFor(async () => (await page.title()) === '(1) Brainstem', { what: 'one left in the tab title' });

      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, 'attention-phone');
      await page.emulateMedia({ colorScheme: 'dark' });
      await screenshot(page, 'attention-phone-dark');
    });

    it('Given notifications allowed and the page in the background, When a session newly needs attention, Then the browser notifies once, not for what already waited', async () => {
      const before = await startAsking('Bash', { command: 'ls' });
      await waitFor(async () => (await status(before.id)).state === 'pending_authorization', { what: 'the first request' });
      await page.context().grantPermissions(['notifications'], { origin: t.url });
      // Records notifications instead of showing them, and makes the page look unattended (a background tab).
      await page.addInitScript(`
        window.__notes = [];
        window.Notification = class { static permission = 'granted'; static requestPermission = async () => 'granted'; constructor(title, o) { window.__notes.push({ title, body: o.body, tag: o.tag }); } };
        document.hasFocus = () => false;
      `);
      await signIn(page, t.url, t.token);
      await page.locator(`[data-session="${before.id}"]`).waitFor();
      const s = await startAsking('Write', { file_path: `${cwd.path}/x.txt`, content: 'x' });
      await page.locator(`[data-session="${s.id}"]`).waitFor();
      const notes = await waitFor(async () => {
        const n = (await page.evaluate('window.__notes')) as { title: string; body: string; tag: string }[];
        return n.length > 0 && n;
      }, { what: 'a notification' });
      expect(notes).toEqual([{ title: `${s.alias} 待授权`, body: 'wants to use Write', tag: s.id }]);
    });

    it('Given the event stream drops, When the page reconnects, Then it resumes from its last id with the header and the queue stays live', async () => {
      const streams: { lastEventId: string | undefined; authorization: string | undefined; url: string }[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/api/v1/events/stream')) streams.push({ lastEventId: r.headers()['last-event-id'], authorization: r.headers()['authorization'], url: r.url() });
      });
      await signIn(page, t.url, t.token);
      await page.getByText('live', { exact: true }).waitFor();
      // Every open connection is cut, the page's stream with them; the listener stays up.
      t.app.getHttpServer().closeAllConnections();
      await waitFor(() => streams.length >= 2, { what: 'the page to reconnect' });
      const s = await startAsking('Bash', { command: 'make release' });
      await page.locator(`[data-session="${s.id}"]`).getByLabel('command').filter({ hasText: 'make release' }).waitFor();
      expect(streams[0].lastEventId).toBeUndefined();
      expect(streams[1].lastEventId).toMatch(/^\d+$/);
      expect(streams.every((r) => r.authorization === `Bearer ${t.token}` && !r.url.includes('?'))).toBe(true);
    });
  });

  describe('supervision and the main chat', () => {
    it('Given supervision is off, When the switch named Supervision is turned on with a task hint and a cap, Then the service is supervising and the page says so', async () => {
      await signIn(page, t.url, t.token);
      await page.getByRole('link', { name: 'Supervision' }).click();
      const toggle = page.getByRole('switch', { name: 'Supervision' });
      expect(await toggle.getAttribute('aria-checked')).toBe('false');
      await page.getByLabel('Task hint (optional)').fill('ship the release');
      await page.getByLabel('Max turns (optional)').fill('7');
      await toggle.click();
      await waitFor(async () => (await toggle.getAttribute('aria-checked')) === 'true', { what: 'the switch to show on' });
      const state = (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/autonomous' })).json();
      expect(state.autonomous).toEqual(expect.objectContaining({ enabled: true, task_hint: 'ship the release', max_turns: 7 }));
      await page.getByText('0 of 7').waitFor();
      await screenshot(page, 'supervision-on');

      await toggle.click();
      await waitFor(async () => (await toggle.getAttribute('aria-checked')) === 'false', { what: 'the switch to show off' });
      expect((await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/autonomous' })).json().autonomous.enabled).toBe(false);
    });

    it("Given a project folder, When Brainstem's hooks are previewed, installed and uninstalled from the page, Then the diff shows first and the file is written only once confirmed", async () => {
      const project = tempDir('brainstem-dash-hooks-');
      try {
        const local = join(project.path, '.claude', 'settings.local.json');
        await signIn(page, t.url, t.token);
        await page.getByRole('link', { name: 'Supervision' }).click();
        await page.getByLabel('Scope').selectOption('project');
        await page.getByLabel('Project folder (absolute)').fill(project.path);
        await page.getByRole('button', { name: 'Preview install…' }).click();
        const preview = page.getByRole('region', { name: 'Settings preview' });
        await preview.locator('pre.diff').filter({ hasText: `+++ ${local}` }).waitFor();
        expect(existsSync(local)).toBe(false);
        await screenshot(page, 'claude-hooks-preview');
        await page.getByRole('button', { name: 'Install the hooks' }).click();
        await page.getByRole('status').filter({ hasText: `Installed into ${local}.` }).waitFor();
        expect(Object.keys(JSON.parse(readFileSync(local, 'utf8')).hooks)).toContain('Stop');
        await page.getByRole('button', { name: 'Preview uninstall…' }).click();
        await page.getByRole('button', { name: 'Uninstall the hooks' }).click();
        await page.getByRole('status').filter({ hasText: 'Restored, byte for byte:' }).waitFor();
        expect(existsSync(local)).toBe(false);
      } finally {
        project.remove();
      }
    });

    it('Given the chat is open, When the user sends a message and a (fake) brain streams its reply, Then the reply shows as it comes and then as the journaled message', async () => {
      await signIn(page, t.url, t.token);
      await page.getByRole('link', { name: 'Main chat' }).click();
      await page.getByLabel('Message to the main brain').fill('what is w1 doing? <b>bold?</b>');
      await page.getByRole('button', { name: 'Send to the main brain' }).click();
      await page.locator('.message.role-user .text').filter({ hasText: 'what is w1 doing? <b>bold?</b>' }).waitFor();
      // The brain's side, as its driver does it: text deltas while the turn runs, then the whole message.
      const chat = t.app.get(ChatService);
      chat.publishDelta({ turn_id: 'turn-1', text: 'w1 is running ' });
      chat.publishDelta({ turn_id: 'turn-1', text: 'the tests' });
      await page.locator('.message.draft .text').filter({ hasText: 'w1 is running the tests' }).waitFor();
      await screenshot(page, 'chat-streaming');
      await chat.postBrain('message', 'w1 is running the tests; 3 failed so far.', 'turn-1');
      await page.locator('.message.role-brain .text').filter({ hasText: 'w1 is running the tests; 3 failed so far.' }).waitFor();
      await page.locator('.message.draft').waitFor({ state: 'detached' });
      await screenshot(page, 'chat');
    });
  });

  describe("the brain's presence", () => {
    it('Given no brain connected, When the chat is open and a message is sent, Then the chat says no brain reads it and how to connect one; When a brain follows the rounds, Then it says who reads', async () => {
      await signIn(page, t.url, t.token);
      await page.getByRole('link', { name: 'Main chat' }).click();
      const banner = page.getByRole('alert', { name: 'Who reads the messages' });
      await banner.getByText('No brain is connected.').waitFor();
      await banner.getByText("Follow GET /api/v1/session-os/main-brain/rounds/stream with the brain's token").waitFor();
      await page.getByLabel('Message to the main brain').fill('is anyone there?');
      await page.getByRole('button', { name: 'Send to the main brain' }).click();
      // The message, and right after it the service's notice.
      await page.locator('.messages > li').last().filter({ hasText: 'Nothing reads this message until a brain connects.' }).waitFor();
      const last = await page.locator('.messages > li').evaluateAll((items) => items.slice(-2).map((li) => li.className));
      expect(last).toEqual(['message role-user kind-message', 'message role-system kind-notice']);
      await screenshot(page, 'chat-no-brain');

      const brain = await openSse(`${t.url}/api/v1/session-os/main-brain/rounds/stream`, t.auth('main_brain'));
      try {
        await brain.take(1);
        // Polled: the banner follows within its period.
        const read = page.getByRole('status', { name: 'Who reads the messages' });
        await read.getByText('a brain you bring (stream, 1 following the rounds)').waitFor({ timeout: 15_000 });
        await screenshot(page, 'chat-brain-connected');
        await page.getByRole('link', { name: 'Supervision' }).click();
        await page.getByRole('status', { name: 'Who reads the messages' }).getByText('Read by').waitFor();
      } finally {
        brain.close();
      }
    });
  });

  describe('the chat answers and confirms in place', () => {
    it("Given a worker's question in the chat, When it is answered there, Then the answer goes to that worker", async () => {
      const asks = await startSignalling(t, { type: 'ask_human', question: 'May I delete the old fixtures?' }, 'asks in the chat');
      await signIn(page, t.url, t.token);
      await page.getByRole('link', { name: 'Main chat' }).click();
      const question = page.locator('.message.role-worker.kind-question').filter({ hasText: 'May I delete the old fixtures?' });
      await question.getByLabel('Answer this question').fill('Yes, the ones under v1/ only');
      await question.getByRole('button', { name: 'Send the answer' }).click();
      await waitFor(async () => (await status(asks.id)).state === 'working', { what: 'the answered worker to work' });
      const sent = (await t.inject({ method: 'GET', url: `/api/v1/journal/events?stream=session-${asks.id}&type=session.message_dispatched` })).json();
      expect(sent.events.map((e: { data: { text: string } }) => e.data.text)).toEqual(['Yes, the ones under v1/ only']);
      // Answered: the question names its session, asks no more, and says who answered it.
      await question.getByLabel('Answer this question').waitFor({ state: 'detached' });
      await question.getByText(`worker · ${asks.alias}`).waitFor();
      await question.getByText(/^Answered by you \(#\d+\)\.$/).waitFor();
    });

    it('Given the main brain asks to stop a session (a gated call), When the user confirms it in the chat, Then it runs and the buttons go', async () => {
      const w = await startAsking('Bash', { command: 'sleep 1000' });
      await signIn(page, t.url, t.token);
      await page.getByRole('link', { name: 'Main chat' }).click();
      const asked = (await t.app.get(ToolRegistry).call('stop_session', { session: w.id }, 'main_brain', { actor: 'main_brain' })) as { confirmation_id: string };
      const gate = page.locator('.message.kind-confirmation').filter({ hasText: asked.confirmation_id }).first();
      await gate.getByRole('button', { name: 'Confirm' }).waitFor();
      await screenshot(page, 'chat-confirmation');
      await gate.getByRole('button', { name: 'Confirm' }).click();
      await waitFor(async () => (await status(w.id)).state === 'exited', { what: 'the confirmed stop to run' });
      await gate.getByRole('button', { name: 'Confirm' }).waitFor({ state: 'detached' });
    });
  });

  describe('questions, blocked sessions and stalls', () => {
    const slow = useTestApp({ BRAINSTEM_SUPERVISION_STALL_THRESHOLD_S: '1' }, { listen: true, dashboardDir: () => harness.webDir });

    it('Given a question and a blocked reason waiting, When a wait passes the stall threshold, Then both show what they wait on, oldest first, marked stalled, and the question is answered in place', async () => {
      const asks = await startSignalling(slow, { type: 'ask_human', question: 'Which database: <em>Postgres</em> or SQLite?' }, 'asks a question');
      await waitFor(async () => (await slow.inject({ method: 'GET', url: `/api/v1/coding-sessions/${asks.id}` })).json().state === 'pending_decision', { what: 'the question' });
      const blocked = await startSignalling(slow, { type: 'notify_blocked', reason: 'npm install fails: EACCES' }, 'is blocked');
      await signIn(page, slow.url, slow.token);
      const question = page.locator(`[data-session="${asks.id}"]`);
      await question.locator('blockquote.question').filter({ hasText: 'Which database: <em>Postgres</em> or SQLite?' }).waitFor();
      await question.getByText('待拍板').waitFor();
      await page.locator(`[data-session="${blocked.id}"] blockquote.blocked`).filter({ hasText: 'npm install fails: EACCES' }).waitFor();
      expect(await page.locator('[data-session]').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-session')))).toEqual([asks.id, blocked.id]);
      await question.locator('.age.stalled').waitFor();
      await page.locator(`[data-session="${blocked.id}"] .age.stalled`).waitFor();
      await screenshot(page, 'attention-question-blocked-stalled');

      await page.getByLabel(`Reply to ${asks.alias}`).fill('SQLite');
      await question.getByRole('button', { name: 'Send the answer' }).click();
      await waitFor(async () => (await slow.inject({ method: 'GET', url: `/api/v1/coding-sessions/${asks.id}` })).json().state === 'working', { what: 'the answered session to work' });
      await question.waitFor({ state: 'detached' });
      const sent = (await slow.inject({ method: 'GET', url: `/api/v1/journal/events?stream=session-${asks.id}&type=session.message_dispatched` })).json();
      expect(sent.events.map((e: { data: { text: string } }) => e.data.text)).toEqual(['SQLite']);
    });
  });
});
