import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper, isAlive } from '../support/workers';
import { BIN, call, readText, stdioBridge } from './mcp-client';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `node bin/brainstem.js mcp --url …` (the TypeScript source through swc when dist/ has no CLI) driven by the SDK's stdio client. */
describe('MCP over stdio (brainstem mcp bridging to the running service)', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100', BRAINSTEM_API_TOKEN: 'stdio-token' }, { listen: true, beforeClose: () => reaper.killAll() });
  const bridges: Array<{ client: Client; transport: StdioClientTransport }> = [];

  const bridge = async (opts: { session?: string; token?: string; dataDir?: string } = {}) => {
    const b = stdioBridge(t.url, opts);
    bridges.push(b);
    return b.connect();
  };

  afterEach(async () => {
    const pids = bridges.map((b) => b.transport.pid);
    await Promise.allSettled(bridges.splice(0).map((b) => b.client.close()));
    try {
      // Closing stdin ends the bridge: no child outlives its test.
      await waitFor(() => pids.every((pid) => pid === null || !isAlive(pid)), { what: 'the bridges to exit' });
    } finally {
      for (const pid of pids) if (pid !== null && isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  const startWorker = async (): Promise<Json> => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/coding-sessions',
      headers: { authorization: 'Bearer stdio-token' },
      payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Json;
    reaper.track(body.pid);
    return body;
  };

  it('serves the main brain (no BRAINSTEM_SESSION_ID) and a worker (BRAINSTEM_SESSION_ID) their own tool sets', async () => {
    const w = await startWorker();
    const brain = await bridge({ token: t.tokenOf('main_brain') });
    const worker = await bridge({ token: t.tokenOf({ worker: w.id }), session: w.id });
    const brainTools = (await brain.listTools()).tools.map((x) => x.name);
    expect(brainTools).toEqual(expect.arrayContaining(['enable_supervision', 'list_sessions', 'manage_agent_profile']));
    expect(brainTools).not.toContain('report_progress');
    expect((await worker.listTools()).tools.map((x) => x.name).sort()).toEqual(['ask_human', 'notify_blocked', 'permission_prompt', 'report_progress', 'request_context']);

    expect((await call(brain, 'enable_supervision', {})).json.autonomous).toMatchObject({ enabled: true });
    expect((await call(worker, 'report_progress', { status: 'completed', message: 'over stdio' })).isError).toBe(false);
    const rounds = await waitFor(async () => {
      const r = (await call(brain, 'supervision_status')).json.autonomous;
      return r.round_in_flight ? r : undefined;
    }, { what: 'a round from the stdio worker' });
    expect(rounds.turns_used).toBe(1);
    expect(await readText(brain, 'brainstem://supervision/current-round')).toContain(w.alias);
    expect((await call(brain, 'finish_supervision', {})).isError).toBe(false);

    const bad = await call(worker, 'ask_human', {});
    expect(bad).toMatchObject({ isError: true, text: expect.stringContaining('question: is required') });
  });

  it('given a whole exchange piped in (initialize, initialized, a tool list), then it answers it all and exits with nothing on stderr', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--url', t.url], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', BRAINSTEM_API_TOKEN: 'stdio-token' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    child.stdin.end(messages.map((m) => JSON.stringify(m)).join('\n') + '\n');
    expect(await exited).toBe(0);
    const answers = out.trim().split('\n').map((line) => JSON.parse(line) as Json);
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1].result.tools.length).toBeGreaterThan(0);
    // The SDK's client aborts its listening stream on close; that is not an error worth printing.
    expect(err).toBe('');
  });

  it('passes the service refusals through as readable errors: a missing token, a session that does not run', async () => {
    await expect(bridge({})).rejects.toThrow(/401|credential/i);
    await expect(bridge({ token: t.tokenOf({ worker: 'cs_unknown' }), session: 'cs_unknown' })).rejects.toThrow(/session cs_unknown is not running/);
  });

  describe('given a service whose user token is in its data directory', () => {
    const own = useTestApp({ BRAINSTEM_API_TOKEN: '' }, { listen: true });

    it("reads the user's token from the data directory's file when no token is given, but never for a worker", async () => {
      const data = own.config.journal.dir;
      const viaFile = stdioBridge(own.url, { dataDir: data });
      bridges.push(viaFile);
      expect((await call(await viaFile.connect(), 'supervision_status')).isError).toBe(false);
      const printed = spawnSync(process.execPath, [BIN, 'token'], { env: { PATH: process.env.PATH ?? '', BRAINSTEM_JOURNAL_DIR: data }, encoding: 'utf8' });
      expect([printed.status, printed.stdout.trim()]).toEqual([0, readFileSync(join(data, 'api-token'), 'utf8').trim()]);
      const worker = stdioBridge(own.url, { dataDir: data, session: 'cs_any' });
      bridges.push(worker);
      await expect(worker.connect()).rejects.toThrow(/401|credential/i);
    });
  });
});
