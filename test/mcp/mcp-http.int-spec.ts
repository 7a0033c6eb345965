import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResult, CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { ToolRegistry } from '../../src/main-brain/tool-registry';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';
import { call, httpClient, readText } from './mcp-client';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MAIN_TOOLS = [
  'complete_round',
  'enable_supervision',
  'finish_supervision',
  'list_sessions',
  'manage_agent_profile',
  'merge_session',
  'overlaps',
  'read_chat',
  'read_session_output',
  'release_session',
  'reply_to_human',
  'resolve_permission',
  'resume_session',
  'send_to_session',
  'session_diff',
  'set_session_budget',
  'set_supervision_scope',
  'start_session',
  'stop_session',
  'suggest_merge_order',
  'supervision_status',
  'usage_report',
];
const WORKER_TOOLS = ['ask_human', 'notify_blocked', 'permission_prompt', 'report_progress', 'request_context'];

describe('MCP over streamable HTTP (the SDK client against /mcp)', () => {
  const reaper = new WorkerReaper();
  const clients: Client[] = [];
  const t = useTestApp(
    { BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100' },
    {
      listen: true,
      each: true,
      beforeClose: async () => {
        await Promise.allSettled(clients.splice(0).map((c) => c.close()));
        reaper.killAll();
      },
    },
  );

  /** A worker with its own credential when a session is named, else the main brain with its own. */
  const connect = async (opts: { session?: string } = {}) => {
    // The session may be named by alias: the credential is minted for its cs_ id.
    const worker = opts.session ? (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${opts.session}` })).json().id : null;
    const c = await httpClient(t.url, { ...opts, token: t.tokenOf(worker ? { worker } : 'main_brain') });
    clients.push(c);
    return c;
  };
  const startWorker = async (): Promise<Json> => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Json;
    reaper.track(body.pid);
    return body;
  };
  const rounds = async () => (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/rounds' })).json().rounds as Json[];

  it('offers the main brain its tools and a worker only the worker tools, with the registry schemas as they are', async () => {
    const w = await startWorker();
    const brain = await connect();
    const worker = await connect({ session: w.id });
    const brainTools = (await brain.listTools()).tools;
    expect(brainTools.map((x) => x.name).sort()).toEqual(MAIN_TOOLS);
    expect((await worker.listTools()).tools.map((x) => x.name).sort()).toEqual(WORKER_TOOLS);
    const rest = (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/tools' })).json().tools as Json[];
    for (const tool of rest) expect(brainTools.find((x) => x.name === tool.name)?.inputSchema).toEqual(tool.parameters);
    expect(brain.getServerVersion()?.name).toBe('brainstem');
    expect(worker.getInstructions()).toContain(w.id);
    expect(worker.getServerCapabilities()?.prompts).toBeUndefined();
    const idle = await brain.getPrompt({ name: 'current_round' });
    expect(idle.messages[0].content).toMatchObject({ type: 'text', text: expect.stringContaining('No supervision round is in flight') });
  });

  it("calls main-brain tools; a worker's report_progress completed causes a supervision round the brain reads as a resource", async () => {
    const w = await startWorker();
    const brain = await connect();
    const listed = await call(brain, 'list_sessions');
    expect(listed.isError).toBe(false);
    expect(listed.json.sessions).toEqual([expect.objectContaining({ id: w.id, alias: w.alias })]);
    // Before supervision was ever enabled the state object is null, and the scope set already shows beside it
    await call(brain, 'set_supervision_scope', { mode: 'except', session_ids: [w.id] });
    const before = { autonomous: null, scope: { mode: 'except', include_external: false, supervised: [], excluded: [w.id] } };
    expect((await call(brain, 'supervision_status')).json).toEqual(before);
    expect(JSON.parse(await readText(brain, 'brainstem://supervision/status'))).toEqual(before);
    expect((await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/autonomous' })).json()).toEqual({ autonomous: null });
    expect((await call(brain, 'enable_supervision', { task_hint: 'ship it', max_turns: 5 })).json.autonomous).toMatchObject({ enabled: true, max_turns: 5 });
    expect((await call(brain, 'set_supervision_scope', { mode: 'only', session_ids: [w.alias] })).json).toMatchObject({ mode: 'only', supervised: [w.id] });

    const worker = await connect({ session: w.id });
    const reported = await call(worker, 'report_progress', { status: 'completed', message: 'tests green' });
    expect(reported.isError).toBe(false);
    expect(reported.json.session).toMatchObject({ id: w.id, last_progress: expect.objectContaining({ status: 'completed' }) });

    const [round] = await waitFor(async () => ((await rounds()).length ? rounds() : undefined), { what: 'the round' });
    expect(round.reasons).toEqual([expect.objectContaining({ session_id: w.id, trigger: expect.stringContaining('completed') })]);
    const status = await call(brain, 'supervision_status');
    expect(status.json.autonomous).toMatchObject({ turns_used: 1, round_in_flight: round.id });

    const resources = (await brain.listResources()).resources.map((r) => r.uri).sort();
    expect(resources).toEqual(['brainstem://supervision/current-round', 'brainstem://supervision/status']);
    expect(await readText(brain, 'brainstem://supervision/current-round')).toContain(round.prompt);
    expect(JSON.parse(await readText(brain, 'brainstem://supervision/status')).autonomous.round_in_flight).toBe(round.id);
    await expect(brain.readResource({ uri: 'brainstem://nope' })).rejects.toThrow(/no resource brainstem:\/\/nope/);
    expect((await brain.listPrompts()).prompts.map((p) => p.name)).toEqual(['current_round']);
    const prompt = await brain.getPrompt({ name: 'current_round' });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: expect.stringContaining(round.prompt) } }]);
    await expect(brain.getPrompt({ name: 'nope' })).rejects.toThrow(/no prompt nope/);

    // What the brain reads back is lean: the round ended (its prompt is the brain's already), where the session stands.
    expect((await call(brain, 'complete_round', { round_id: round.id, summary: 'checked' })).json).toEqual({ id: round.id, status: 'completed', summary: 'checked' });
    expect((await call(brain, 'reply_to_human', { text: 'all done' })).json).toMatchObject({ text: 'all done' });
    const sent = await call(brain, 'send_to_session', { session: w.alias, text: 'next: docs' });
    expect(sent.json).toEqual({ alias: w.alias, state: 'working' });
    expect(sent.text).not.toContain('\n');
    expect((await call(brain, 'finish_supervision', { summary: 'wrapped' })).json.autonomous).toMatchObject({ enabled: false, closed_reason: 'finished' });
    expect((await call(brain, 'stop_session', { session: w.id })).isError).toBe(false);
  });

  it('worker tools act on the caller: notify_blocked, ask_human and request_context land on its own session', async () => {
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    const worker = await connect({ session: a.alias });
    expect((await call(worker, 'request_context', { query: 'where are the fixtures?' })).json.session.id).toBe(a.id);
    expect((await call(worker, 'notify_blocked', { reason: 'no creds' })).json.session).toMatchObject({ id: a.id });
    const asked = await call(worker, 'ask_human', { question: 'Which region?' });
    expect(asked.json.session).toMatchObject({ id: a.id, state: 'pending_decision' });
    const other = (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${b.id}` })).json() as Json;
    expect(other).toMatchObject({ state: 'working', last_progress: null });
  });

  it("permission_prompt (Claude Code's --permission-prompt-tool) waits in 待授权 until the brain resolves it", async () => {
    const w = await startWorker();
    const brain = await connect();
    const worker = await connect({ session: w.id });
    const status = async () => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${w.id}` })).json() as Json;

    const asking = worker.callTool({ name: 'permission_prompt', arguments: { tool_name: 'Bash', input: { command: 'npm test' }, tool_use_id: 'tu_1' } });
    await waitFor(async () => (await status()).state === 'pending_authorization', { what: 'pending_authorization' });
    expect((await status()).pending).toMatchObject({ kind: 'permission', tool: 'Bash' });
    expect((await call(brain, 'resolve_permission', { session: w.alias, decision: 'allow' })).isError).toBe(false);
    // One text block and nothing beside it: Claude Code calls anything else an invalid result (claude 2.1.197).
    const answer = (await asking) as CallToolResult;
    expect(answer.structuredContent).toBeUndefined();
    expect(answer.content).toHaveLength(1);
    expect(answer.content[0].type === 'text' && JSON.parse(answer.content[0].text)).toEqual({ behavior: 'allow', updatedInput: { command: 'npm test' } });

    const again = call(worker, 'permission_prompt', { tool_name: 'Bash', input: { command: 'make clean' } });
    await waitFor(async () => (await status()).state === 'pending_authorization', { what: 'the second request' });
    await call(brain, 'resolve_permission', { session: w.id, decision: 'deny', reason: 'never' });
    expect((await again).json).toEqual({ behavior: 'deny', message: 'never' });
  });

  it('permission_prompt called twice at once (parallel tool calls): both wait, and each caller gets the answer to its own request', async () => {
    const w = await startWorker();
    const brain = await connect();
    const worker = await connect({ session: w.id });
    const status = async () => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${w.id}` })).json() as Json;

    const first = call(worker, 'permission_prompt', { tool_name: 'WebFetch', input: { url: 'https://a.example' } });
    const second = call(worker, 'permission_prompt', { tool_name: 'WebFetch', input: { url: 'https://b.example' } });
    const both = await waitFor(async () => {
      const s = await status();
      return (s.queued_permissions as Json[]).length === 1 && s;
    }, { what: 'both requests pending' });
    const queued = (both.queued_permissions as Json[])[0];
    const resolved = await call(brain, 'resolve_permission', { session: w.alias, decision: 'deny', reason: 'not that one', request_id: queued.request_id });
    expect(resolved.json).toMatchObject({ alias: w.alias, state: 'pending_authorization', pending: { kind: 'permission' } });
    expect(resolved.json).not.toHaveProperty('queued_permissions');
    expect((await call(brain, 'resolve_permission', { session: w.alias, decision: 'allow' })).json).toMatchObject({ state: 'working' });
    const answers = new Map([[(queued.input as Json).url, 'deny']]);
    for (const [p, input] of [[first, { url: 'https://a.example' }], [second, { url: 'https://b.example' }]] as const) {
      const { json } = await p;
      expect(json.behavior).toBe(answers.get(input.url) ?? 'allow');
    }
  });

  it('permission_prompt stops waiting when its caller goes away, and the request stays for the brain to answer', async () => {
    const w = await startWorker();
    const status = async () => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${w.id}` })).json() as Json;
    const caller = new AbortController();
    const waiting = t.app
      .get(ToolRegistry)
      .call('permission_prompt', { tool_name: 'Bash', input: { command: 'make' } }, 'worker', { actor: 'worker', session_id: w.id, signal: caller.signal });
    await waitFor(async () => (await status()).state === 'pending_authorization', { what: 'pending_authorization' });

    caller.abort();

    await expect(waiting).rejects.toMatchObject({ code: 'permission_wait_abandoned', message: expect.stringContaining('the caller went away') });
    expect((await status()).pending).toMatchObject({ kind: 'permission', tool: 'Bash' });
    const brain = await connect();
    expect((await call(brain, 'resolve_permission', { session: w.alias, decision: 'deny' })).isError).toBe(false);
  });

  it('answers bad input with isError results and keeps the connection usable', async () => {
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    const brain = await connect();
    const worker = await connect({ session: a.id });
    const cases: Array<[Client, string, Record<string, unknown>, RegExp]> = [
      [brain, 'no_such_tool', {}, /not_found: no tool no_such_tool/],
      [brain, 'enable_supervision', { max_turns: 0 }, /invalid_input: .*max_turns/],
      [brain, 'enable_supervision', { bogus: 1 }, /bogus: unknown field/],
      [brain, 'send_to_session', { session: 'w999', text: 'hi' }, /not_found: .*w999/],
      [brain, 'report_progress', { status: 'completed' }, /not_found: no tool report_progress/],
      [worker, 'list_sessions', {}, /not_found: no tool list_sessions/],
      [worker, 'report_progress', { status: 'done' }, /invalid_input: .*status/],
      [worker, 'report_progress', { status: 'working', session: b.id }, /permission_denied: worker tools act only on your own session/],
      [worker, 'notify_blocked', { reason: 'x', session: 'w404' }, /not_found: .*w404/],
      [brain, 'manage_agent_profile', { action: 'read' }, /profile_id: is required for action read/],
      [brain, 'manage_agent_profile', { action: 'list', query: 'x' }, /query: not used by action list/],
      [brain, 'manage_agent_profile', { action: 'explode' }, /action: must be one of the following values: list, read/],
    ];
    for (const [client, name, args, message] of cases) {
      const res = await call(client, name, args);
      expect({ name, isError: res.isError }).toEqual({ name, isError: true });
      expect(res.text).toMatch(message);
    }
    expect((await call(worker, 'report_progress', { status: 'working', session: a.alias })).isError).toBe(false);
    expect((await call(brain, 'list_sessions')).isError).toBe(false);
  });

  it('answers tools/call arguments that are not an object with invalid params (-32602) naming them, not an internal error', async () => {
    const brain = await connect();
    for (const [args, what] of [
      [[], 'array'],
      [null, 'null'],
      ['x', 'string'],
    ] as const) {
      const failure = await brain
        .request({ method: 'tools/call', params: { name: 'list_sessions', arguments: args as unknown as Record<string, unknown> } }, CallToolResultSchema)
        .then(() => null, (e: McpError) => ({ code: e.code, message: e.message }));
      expect(failure).toEqual({ code: ErrorCode.InvalidParams, message: expect.stringMatching(new RegExp(`Invalid tools/call request:.*"arguments".*expected record, received ${what}`, 's')) });
    }
    expect((await call(brain, 'list_sessions')).isError).toBe(false);
  });

  it('answers malformed HTTP bodies with 4xx, never a 500', async () => {
    const post = (body: string, contentType = 'application/json') =>
      fetch(new URL('/mcp', t.url), { method: 'POST', headers: { ...t.auth(), 'content-type': contentType, accept: 'application/json, text/event-stream' }, body });
    for (const res of [await post('{not json'), await post('{"jsonrpc":"2.0","method":42}'), await post('hello', 'text/plain')]) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    // Stateless: no server-initiated stream to open.
    expect((await fetch(new URL('/mcp', t.url), { headers: { ...t.auth(), accept: 'text/event-stream' } })).status).toBe(405);
  });

  it('refuses a worker credential for a session that does not run, and a session hint the credential does not back, with a readable error', async () => {
    await expect(httpClient(t.url, { token: t.tokenOf({ worker: 'cs_nope' }) })).rejects.toThrow(/session cs_nope is not running/);
    const w = await startWorker();
    const res = await fetch(new URL('/mcp', t.url), { method: 'POST', headers: { ...t.auth({ worker: w.id }), 'content-type': 'application/json', 'x-brainstem-session': 'cs_nope' }, body: '{}' });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'permission_denied', message: expect.stringContaining('cs_nope') });
  });
});

describe('MCP over streamable HTTP with BRAINSTEM_API_TOKEN', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({ BRAINSTEM_API_TOKEN: 'sekret-token' }, { listen: true, beforeClose: () => reaper.killAll() });

  it("serves a worker through each runtime's emitted config, the token and session taken from the worker's environment", async () => {
    const auth = { authorization: 'Bearer sekret-token' };
    const w = await t.inject({
      method: 'POST',
      url: '/api/v1/coding-sessions',
      headers: auth,
      payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() },
    });
    expect(w.statusCode).toBe(201);
    reaper.track(w.json().pid);
    expect((await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', headers: auth, payload: { name: 'Token Worker' } })).statusCode).toBe(201);
    // What the worker really has: its session and its own credential (never the user's token).
    const workerEnv: Record<string, string> = { BRAINSTEM_SESSION_ID: w.json().id, BRAINSTEM_TOKEN: t.tokenOf({ worker: w.json().id }) };
    // Each runtime's own way of filling a value from the environment, applied to the emitted brainstem server.
    const expand = (text: string, pattern: RegExp) => text.replace(pattern, (_, name: string) => workerEnv[name] ?? '');
    const brainstemOf: Record<string, [string, (content: string) => { url: string; headers: Record<string, string> }]> = {
      'claude-code': ['.mcp.json', (c) => JSON.parse(expand(c, /\$\{(\w+)(?::-)?\}/g)).mcpServers.brainstem],
      'gemini-cli': ['.gemini/settings.json', (c) => {
        const b = JSON.parse(expand(c, /\$\{(\w+)(?::-)?\}/g)).mcpServers.brainstem;
        return { url: b.httpUrl, headers: b.headers };
      }],
      opencode: ['opencode.json', (c) => JSON.parse(expand(c, /\{env:(\w+)\}/g)).mcp.brainstem],
      codex: ['.codex/config.toml', (c) => {
        const b = (parseToml(c) as { mcp_servers: { brainstem: { url: string; bearer_token_env_var: string; env_http_headers: Record<string, string> } } }).mcp_servers.brainstem;
        const headers = Object.fromEntries(Object.entries(b.env_http_headers).map(([h, v]) => [h, workerEnv[v]]));
        return { url: b.url, headers: { ...headers, Authorization: `Bearer ${workerEnv[b.bearer_token_env_var]}` } };
      }],
    };
    for (const [runtime, [path, brainstem]] of Object.entries(brainstemOf)) {
      const preview = await t.inject({ method: 'GET', url: `/api/v1/agent-profiles/token-worker/preview?runtime=${runtime}&dir=${encodeURIComponent(tmpdir())}`, headers: auth });
      const server = brainstem(preview.json().files.find((f: { path: string }) => f.path === path).content);
      expect({ runtime, authorization: server.headers.Authorization }).toEqual({ runtime, authorization: `Bearer ${workerEnv.BRAINSTEM_TOKEN}` });
      const client = new Client({ name: runtime, version: '0.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }));
      try {
        expect((await client.listTools()).tools.map((x) => x.name).sort()).toEqual(WORKER_TOOLS);
      } finally {
        await client.close();
      }
    }
  });

  it('refuses a client without the token and serves one with it', async () => {
    await expect(httpClient(t.url)).rejects.toThrow(/401|credential/i);
    await expect(httpClient(t.url, { token: 'wrong' })).rejects.toThrow(/401|credential/i);
    const brain = await httpClient(t.url, { token: 'sekret-token' });
    try {
      expect((await call(brain, 'supervision_status')).json).toMatchObject({ autonomous: null, scope: { excluded: [] } });
    } finally {
      await brain.close();
    }
  });
});
