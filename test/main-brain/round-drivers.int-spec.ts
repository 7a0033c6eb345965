import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EventBus } from '../../src/bus/event-bus';
import { openMemoryJournal } from '../../src/journal/journal.factory';
import { Journal, JournalError } from '../../src/journal/journal.port';
import { inheritedEnv } from '../../src/auth/child-env';
import { Credentials } from '../../src/auth/credentials';
import { ServiceUrl } from '../../src/config/service-url';
import { commandDriver } from '../../src/main-brain/drivers/command.driver';
import { createRoundDriver } from '../../src/main-brain/drivers/round-drivers';
import { WEBHOOK_ANSWER_LIMIT_BYTES, webhookDriver } from '../../src/main-brain/drivers/webhook.driver';
import { MemoryCredentialStore } from '../support/memory-credential-store';
import { testConfig } from '../support/test-config';
import { RoundDriver } from '../../src/supervision/round-driver.port';
import { SupervisionService } from '../../src/supervision/supervision.service';
import { CapturedLogger } from '../support/captured-logger';
import { MemorySessionDirectory } from '../support/memory-session-directory';
import { waitFor } from '../support/wait-for';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const brain = (f: string) => `${process.execPath} ${resolve(__dirname, '../fixtures/brains', f)}`;
/** A command brain's environment as the service gives it: its own environment (without credentials) and `env`. */
const serviceEnv = (env: Record<string, string>) => () => ({ ...inheritedEnv(process.env), ...env });

describe('main-brain drivers with real processes and a real HTTP endpoint', () => {
  let journal: Journal;
  let svc: SupervisionService;
  let sessions: MemorySessionDirectory;
  let logs: CapturedLogger;
  let n = 0;
  beforeEach(() => (logs = CapturedLogger.capture()));

  const boot = async (driver: RoundDriver, roundTimeoutS = 600) => {
    journal = await openMemoryJournal();
    const bus = new EventBus(journal);
    sessions = new MemorySessionDirectory(journal);
    sessions.add('cs_a');
    sessions.add('cs_b');
    svc = new SupervisionService(bus, journal, sessions, { debounce_ms: 20, restore_ttl_s: 900, round_timeout_s: roundTimeoutS }, Date.now, () => String(++n), driver);
    await svc.start();
    await svc.enable({}, 'user', 'test');
  };
  afterEach(async () => {
    logs.release();
    svc.stop();
    await journal.close();
  });

  it('command: runs the brain with the prompt on stdin; the round ends at its exit with its output as summary', async () => {
    await boot(commandDriver(brain('echo-brain.js'), serviceEnv({ BRAINSTEM_URL: 'http://127.0.0.1:4820' })));
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    await sessions.emit('cs_b', 'session.asked_human', { question: 'y' });
    const [round] = await waitFor(() => (svc.listRounds()[0]?.status === 'completed' ? svc.listRounds() : undefined), { what: 'the round to complete' });
    expect(round.summary).toBe(`round ${round.id} at http://127.0.0.1:4820: handled 2 reason(s)`);
  });

  it("command: the brain Brainstem starts holds its own credential and never the user's token the service was started with", async () => {
    const credentials = new Credentials(new MemoryCredentialStore(), { configuredUserToken: 'the-users-token' });
    const config = testConfig({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'command', BRAINSTEM_MAIN_BRAIN_COMMAND: 'echo "${BRAINSTEM_API_TOKEN:-no-user-token} $BRAINSTEM_TOKEN"' });
    // The service's environment holds the user's token.
    await boot(createRoundDriver(config, new ServiceUrl('http://127.0.0.1:4820'), credentials, { ...process.env, BRAINSTEM_API_TOKEN: 'the-users-token' }));
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    const [round] = await waitFor(() => (svc.listRounds()[0]?.status === 'completed' ? svc.listRounds() : undefined), { what: 'the round to complete' });
    expect(round.summary).toBe(`no-user-token ${credentials.brainToken()}`);
    expect(credentials.authenticate(credentials.brainToken())).toEqual({ kind: 'main_brain' });
  });

  it('command: a brain that never exits is killed when its round times out', async () => {
    const pidFile = join(tmpdir(), `brainstem-brain-${process.pid}-${Date.now()}.pid`);
    await boot(commandDriver(brain('hanging-brain.js'), serviceEnv({ PID_FILE: pidFile })), 1);
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    const pid = await waitFor(() => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')), { what: 'the brain to start' });
    await waitFor(() => svc.listRounds()[0]?.status === 'timed_out', { what: 'the timeout' });
    await waitFor(() => !isAlive(pid), { what: 'the brain process to be killed' });
    rmSync(pidFile, { force: true });
  });

  it('command: a round the brain ended whose end cannot be journaled is logged with the round, and the service keeps answering', async () => {
    // Given a brain that exits once a gate file appears
    const gate = join(tmpdir(), `brainstem-gate-${process.pid}-${Date.now()}`);
    await boot(commandDriver(`cat >/dev/null; while [ ! -e '${gate}' ]; do sleep 0.05; done; echo handled`, serviceEnv({})));
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    const [round] = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'the round' });
    // And a journal that refuses the service's appends to the supervision stream (a foreign write no longer would: the
    // service follows other writers and decides again on a conflict)
    const appendAll = journal.appendAll.bind(journal);
    const refusal = jest.spyOn(journal, 'appendAll').mockImplementation((writes, options) =>
      writes.some((w) => w.stream === 'supervision') ? Promise.reject(new JournalError('journal_closed', 'the journal refuses supervision appends (test)')) : appendAll(writes, options),
    );
    try {
      // When the brain exits
      writeFileSync(gate, '');
      // Then the end it could not record is logged, naming the round and why
      const error = await waitFor(() => logs.messages('error', 'supervision').find((m) => m.startsWith(`round ${round.id}: `)), { what: 'the error logged' });
      expect(error).toBe(`round ${round.id}: the command brain ended it, but recording its end failed: the journal refuses supervision appends (test)`);
      // And the service still answers, with the round in flight as the journal has it
      expect(svc.getRound(round.id).status).toBe('in_flight');
      expect(svc.status().autonomous).toMatchObject({ enabled: true, round_in_flight: round.id });
    } finally {
      refusal.mockRestore();
      rmSync(gate, { force: true });
    }
  });

  describe('command: ending a brain whose round ended otherwise', () => {
    const files = (tag: string) => {
      const base = join(tmpdir(), `brainstem-brain-${process.pid}-${Date.now()}-${tag}`);
      return { PID_FILE: `${base}.pid`, REPLY_FILE: `${base}.reply`, DONE_FILE: `${base}.done`, TERM_FILE: `${base}.term` };
    };
    let made: Array<Record<string, string>> = [];
    afterEach(() => {
      for (const f of made.flatMap((m) => Object.values(m))) rmSync(f, { force: true });
      made = [];
    });
    const startBrain = async (env: Record<string, string>, roundTimeoutS = 600, graceMs?: number) => {
      made.push(env);
      await boot(commandDriver(brain('finishing-brain.js'), serviceEnv(env), { graceMs }), roundTimeoutS);
      await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
      return waitFor(() => existsSync(env.PID_FILE) && Number(readFileSync(env.PID_FILE, 'utf8')), { what: 'the brain to start' });
    };

    it('lets a brain that completed its own round read the answer and exit by itself', async () => {
      const f = files('completes');
      const pid = await startBrain(f);
      await svc.completeRound(svc.listRounds()[0].id, 'done by the brain');
      writeFileSync(f.REPLY_FILE, 'ok');
      await waitFor(() => existsSync(f.DONE_FILE), { what: 'the brain to finish on its own' });
      await waitFor(() => !isAlive(pid), { what: 'the brain to exit' });
      expect(existsSync(f.TERM_FILE)).toBe(false);
    });

    it('sends a timed-out brain SIGTERM, and SIGKILL when it ignores that for the grace period', async () => {
      const f = { ...files('ignores'), IGNORE_TERM: '1' };
      const pid = await startBrain(f, 1, 200);
      await waitFor(() => svc.listRounds()[0]?.status === 'timed_out', { what: 'the timeout' });
      await waitFor(() => existsSync(f.TERM_FILE), { what: 'the SIGTERM' });
      await waitFor(() => !isAlive(pid), { what: 'the SIGKILL after the grace period' });
      expect(existsSync(f.DONE_FILE)).toBe(false);
    });
  });

  describe('webhook', () => {
    let server: Server;
    let url: string;
    const received: unknown[] = [];
    let answer = (_req: IncomingMessage) => ({ status: 200, body: JSON.stringify({ summary: 'webhook brain handled it' }) });

    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          received.push(JSON.parse(body));
          const a = answer(req);
          res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain`;
    });
    afterAll(() => new Promise((r) => server.close(r)));

    it('POSTs the round; the response ends it with its summary', async () => {
      await boot(webhookDriver(url, () => 'http://127.0.0.1:4820'));
      await sessions.emit('cs_a', 'session.progress', { status: 'completed', message: 'tests green' });
      const [round] = await waitFor(() => (svc.listRounds()[0]?.status === 'completed' ? svc.listRounds() : undefined), { what: 'completion' });
      expect(round.summary).toBe('webhook brain handled it');
      expect(received.at(-1)).toMatchObject({ service_url: 'http://127.0.0.1:4820', round: { id: round.id, reasons: [{ session_id: 'cs_a', message: 'tests green' }] } });
    });

    it('a failing webhook ends the round failed with the failure recorded and logged, its turn used, and the next trigger starts a round', async () => {
      // Given a webhook that answers 503
      answer = () => ({ status: 503, body: 'busy' });
      await boot(webhookDriver(url, () => ''));
      // When a round is delivered to it
      await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
      // Then the round ends failed, with the failure (not a summary) recorded and logged
      const [round] = await waitFor(() => (svc.listRounds()[0]?.status === 'failed' ? svc.listRounds() : undefined), { what: 'the failure' });
      expect(round).toMatchObject({ summary: null, failure: 'delivery to the main brain failed (webhook): webhook answered 503: busy', ended_at: expect.any(String) });
      expect(logs.messages('warn', 'supervision')).toEqual([`round ${round.id}: ${round.failure}`]);
      expect(svc.status().autonomous).toMatchObject({ enabled: true, turns_used: 1, round_in_flight: null });
      // And once the webhook answers again, the next trigger starts a round normally
      answer = () => ({ status: 200, body: JSON.stringify({ summary: 'back' }) });
      await sessions.emit('cs_b', 'session.blocked', { reason: 'y' });
      const [next] = await waitFor(() => (svc.listRounds()[0]?.status === 'completed' ? svc.listRounds() : undefined), { what: 'the next round' });
      expect(next).toMatchObject({ summary: 'back', failure: null, reasons: [{ session_id: 'cs_b' }] });
      expect(svc.status().autonomous).toMatchObject({ turns_used: 2 });
    });

    it('cuts off an answer past the limit, an endless one too: the round ends with that reason, logged, and the connection is dropped', async () => {
      // Given a brain whose answer never ends
      let written = 0;
      let dropped!: Promise<number>;
      const endless = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"summary": "');
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
        };
        dropped = new Promise((r) => res.once('close', () => r(written)));
        pump();
      });
      await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
      try {
        await boot(webhookDriver(`http://127.0.0.1:${(endless.address() as AddressInfo).port}/brain`, () => ''));
        // When a round is delivered to it
        await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
        // Then the round fails, recording and logging that the answer was cut off at the limit
        const [round] = await waitFor(() => (svc.listRounds()[0]?.status === 'failed' ? svc.listRounds() : undefined), { what: 'the failure' });
        expect(WEBHOOK_ANSWER_LIMIT_BYTES).toBe(1024 * 1024);
        expect(round.failure).toBe('delivery to the main brain failed (webhook): webhook answered 200 with more than 1048576 bytes; the answer was cut off there');
        expect(logs.messages('warn', 'supervision')).toEqual([`round ${round.id}: ${round.failure}`]);
        // And the service dropped the connection: the brain could write the limit and what the sockets buffer, no more
        const sent = await dropped;
        expect(sent).toBeGreaterThan(WEBHOOK_ANSWER_LIMIT_BYTES);
        expect(sent).toBeLessThan(64 * WEBHOOK_ANSWER_LIMIT_BYTES);
      } finally {
        endless.closeAllConnections();
        await new Promise((r) => endless.close(r));
      }
    });
  });
});
