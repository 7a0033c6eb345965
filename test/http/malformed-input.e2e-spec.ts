import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
interface PropertySchema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  enum?: string[];
}
interface ToolSchema {
  properties?: Record<string, PropertySchema>;
}

/** Values of every JSON type and shape that no field of the API takes as they are. */
const ODD_VALUES: unknown[] = [
  null,
  '',
  -1,
  1.5,
  1e308,
  true,
  [],
  {},
  [null],
  { $gt: '' },
  '\u0000',
  '\ud800',
  '../../../../etc/passwd',
  'x'.repeat(70_000),
  Array.from({ length: 300 }, () => 'a'),
];

/** Request bodies that are not objects, or not JSON at all. */
const ODD_BODIES: Array<{ payload: string; contentType: string }> = [
  ...['null', '[]', '"text"', '42', 'true', '{', '{"a":', '[1,2', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}'].map((payload) => ({
    payload,
    contentType: 'application/json',
  })),
  { payload: '['.repeat(20_000) + ']'.repeat(20_000), contentType: 'application/json' },
  { payload: `{"a":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`, contentType: 'application/json' },
  { payload: 'name=x', contentType: 'application/x-www-form-urlencoded' },
  { payload: 'plain words', contentType: 'text/plain' },
  { payload: '\u00ff\u00fe', contentType: 'application/json; charset=latin1' },
];

/**
 * Every route and every main-brain tool, fed malformed bodies, odd field values and odd query values: each
 * answer is a 4xx (or a 2xx where the value happens to be acceptable), never a 5xx, and the service and its
 * journal stay whole.
 */
describe('malformed input on every route', () => {
  const cwd = tempDir('brainstem-malformed-cwd-');
  let sessionId: string;
  let profileId: string;
  let failures: string[] = [];
  const t = useTestApp({}, { beforeClose: (app) => app.inject({ method: 'POST', url: `/api/v1/coding-sessions/${sessionId}/stop`, payload: { grace_ms: 0 } }) });

  beforeAll(async () => {
    const session = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'command', command: 'sleep', args: ['60'] } });
    expect(session.statusCode).toBe(201);
    sessionId = session.json().id;
    const profile = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'Fuzz target' } });
    expect(profile.statusCode).toBe(201);
    profileId = profile.json().id;
  });

  beforeEach(() => {
    failures = [];
  });

  afterAll(() => cwd.remove());

  async function send(method: Method, url: string, body?: { payload: string; contentType: string }): Promise<void> {
    const res = await t.inject({
      method,
      url: `/api/v1${url}`,
      ...(body ? { payload: body.payload, headers: { 'content-type': body.contentType } } : {}),
    });
    if (res.statusCode >= 500) failures.push(`${method} ${url} ${body ? body.payload.slice(0, 400) : ''} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
  }

  const json = (value: unknown) => ({ payload: JSON.stringify(value), contentType: 'application/json' });

  /** Each field of a sample body set to each odd value in turn, and the sample with an unknown field. */
  function variants(sample: Record<string, unknown>, fields: readonly string[]): Array<{ payload: string; contentType: string }> {
    const out = [json(sample), json({ ...sample, unknown_field: 1 }), ...ODD_BODIES];
    for (const field of fields) for (const value of ODD_VALUES) out.push(json({ ...sample, [field]: value }));
    return out;
  }

  function ids(): string[] {
    return [sessionId, profileId, 'nope', '..%2F..%2Fetc', '%00', 'x'.repeat(5_000), '%F0%9F%92%A5', '__proto__', 'constructor'];
  }

  it('given odd path ids, then every route with an id answers 4xx or 2xx, never 5xx', async () => {
    for (const id of ids()) {
      for (const [method, url] of [
        ['GET', `/coding-sessions/${id}`],
        ['GET', `/coding-sessions/${id}/output`],
        ['POST', `/coding-sessions/${id}/messages`],
        ['POST', `/coding-sessions/${id}/permission`],
        ['POST', `/coding-sessions/${id}/signals`],
        ['PATCH', `/coding-sessions/${id}/supervision`],
        ['GET', `/agent-profiles/${id}`],
        ['PATCH', `/agent-profiles/${id}`],
        ['POST', `/agent-profiles/${id}/duplicate`],
        ['POST', `/agent-profiles/${id}/set-default`],
        ['GET', `/agent-profiles/${id}/lint`],
        ['GET', `/agent-profiles/${id}/export`],
        ['GET', `/agent-profiles/${id}/preview`],
        ['GET', `/session-os/main-brain/rounds/${id}`],
        ['POST', `/session-os/main-brain/rounds/${id}/complete`],
        ['GET', `/workflow-runs/${id}`],
        ['POST', `/workflow-runs/${id}/converge`],
        ['POST', `/session-os/main-brain/tools/${id}`],
        ['GET', `/session-os/main-brain/confirmations/${id}`],
        ['POST', `/session-os/main-brain/confirmations/${id}/confirm`],
        ['POST', `/session-os/main-brain/confirmations/${id}/refuse`],
      ] as const) {
        await send(method, url, method === 'GET' ? undefined : json({}));
      }
      // The profile under test is needed by the later sweeps.
      if (id !== profileId) await send('DELETE', `/agent-profiles/${id}`);
    }
    expect(failures).toEqual([]);
  });

  it('given odd bodies and odd field values, then every route that takes a body answers 4xx or 2xx, never 5xx', async () => {
    const routes: Array<[Method, string, Record<string, unknown>, string[]]> = [
      ['POST', '/coding-sessions', { cwd: cwd.path, runtime: 'command', command: 'true' }, ['title', 'runtime', 'profile_id', 'cwd', 'prompt', 'command', 'args', 'env', 'excluded']],
      ['POST', `/coding-sessions/${sessionId}/messages`, { text: 'hello' }, ['text']],
      ...(
        [
          { type: 'report_progress', status: 'working', message: 'm' },
          { type: 'notify_blocked', reason: 'r' },
          { type: 'ask_human', question: 'q' },
          { type: 'request_context', query: 'q' },
          { type: 'turn_ended', result: 'r' },
          { type: 'permission_request', tool: 'Bash', input: { command: 'ls' } },
        ] as Array<Record<string, unknown>>
      ).map((sample): [Method, string, Record<string, unknown>, string[]] => ['POST', `/coding-sessions/${sessionId}/signals`, sample, Object.keys(sample)]),
      ['POST', `/coding-sessions/${sessionId}/permission`, { decision: 'allow' }, ['decision', 'reason', 'request_id']],
      ['PATCH', `/coding-sessions/${sessionId}/supervision`, { excluded: false }, ['excluded']],
      ['POST', '/coding-sessions/supervision-scope', { mode: 'all' }, ['mode', 'session_ids']],
      ['POST', '/session-os/main-brain/autonomous', { enabled: true }, ['enabled', 'task_hint', 'max_turns']],
      ['POST', '/session-os/main-brain/messages', { text: 'hello' }, ['text']],
      ['POST', '/session-os/main-brain/rounds/r_nope/complete', { summary: 'done' }, ['summary']],
      ['POST', '/workflow-runs', { workflow_id: 'wf' }, ['workflow_id', 'name', 'auto_supervise', 'session_ids']],
      ['POST', '/agent-profiles', { name: 'Fuzz' }, ['name', 'target_runtime', 'version', 'description', 'icon', 'model', 'instructions', 'tools', 'permissions', 'skills', 'hooks', 'auto_apply_dir']],
      ['PATCH', `/agent-profiles/${profileId}`, { description: 'd' }, ['name', 'target_runtime', 'model', 'instructions', 'tools', 'permissions', 'skills', 'hooks']],
      ['POST', '/agent-profiles/import', { yaml: 'name: Imported\n' }, ['yaml']],
      ['POST', '/agent-profiles/project-binding', { project_dir: cwd.path, profile_id: null }, ['project_dir', 'profile_id']],
      ['POST', `/agent-profiles/${profileId}/duplicate`, { name: 'Copy' }, ['name']],
      ['POST', `/agent-profiles/${profileId}/apply`, { runtime: 'claude-code', dir: cwd.path }, ['runtime', 'dir', 'force']],
    ];
    for (const [method, url, sample, fields] of routes) {
      for (const body of variants(sample, fields)) await send(method, url, body);
    }
    expect(failures).toEqual([]);
  });

  /** Every path to a value inside a document (objects and arrays included), as key lists. */
  function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
    if (value === null || typeof value !== 'object') return [at];
    const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    return [at, ...entries.flatMap(([k, v]) => paths(v, [...at, k]))];
  }

  function replaced(doc: unknown, path: Array<string | number>, value: unknown): unknown {
    if (path.length === 0) return value;
    const copy = (Array.isArray(doc) ? [...doc] : { ...(doc as object) }) as Record<string | number, unknown>;
    copy[path[0]] = replaced(copy[path[0]], path.slice(1), value);
    return copy;
  }

  it('given a full profile with any one value inside it made odd, then create, update and the profile tool answer 4xx or 2xx, never 5xx', async () => {
    const fields = ['target_runtime', 'version', 'description', 'icon', 'model', 'instructions', 'tools', 'permissions', 'skills', 'hooks', 'auto_apply_dir', 'default_cwd'];
    const view = (await t.inject({ method: 'GET', url: '/api/v1/agent-profiles/code-reviewer' })).json() as Record<string, unknown>;
    const doc: Record<string, unknown> = {
      name: 'Nested fuzz',
      ...Object.fromEntries(fields.filter((f) => view[f] !== undefined && view[f] !== null).map((f) => [f, view[f]])),
      hooks: { PreToolUse: [{ type: 'command', matcher: 'Bash', command: 'true', timeout: 5 }] },
      tools: { ...(view.tools as object), mcp_servers: { docs: { type: 'http', url: 'https://example.com/mcp' } } },
    };
    const created = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: doc });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    const leafPaths = paths(doc).filter((p) => p.length > 1);
    expect(leafPaths.length).toBeGreaterThan(10);
    let n = 0;
    for (const path of leafPaths) {
      for (const odd of ODD_VALUES) {
        const body = replaced(doc, path, odd) as Record<string, unknown>;
        await send('POST', '/agent-profiles', json({ ...body, name: `Nested fuzz ${++n}` }));
        const { name: _name, ...fieldsOnly } = body;
        await send('PATCH', `/agent-profiles/${id}`, json(fieldsOnly));
        await send('POST', '/session-os/main-brain/tools/manage_agent_profile', json({ action: 'update', profile_id: id, profile: fieldsOnly }));
      }
    }
    expect(failures).toEqual([]);
  });

  it('given odd query values, then every route that takes a query answers 4xx or 2xx, never 5xx', async () => {
    const queries: Array<[string, string[]]> = [
      ['/coding-sessions', ['state', 'excluded', 'limit', 'cursor']],
      ['/session-os/main-brain/rounds', ['limit', 'cursor']],
      ['/workflow-runs', ['limit', 'cursor']],
      [`/coding-sessions/${sessionId}/output`, ['tail']],
      ['/journal/events', ['after_seq', 'stream', 'type', 'limit']],
      ['/session-os/main-brain/messages', ['limit']],
      ['/agent-profiles/project-binding', ['project_dir', 'dir']],
      [`/agent-profiles/${profileId}/lint`, ['scope']],
      [`/agent-profiles/${profileId}/preview`, ['runtime', 'dir']],
      ['/agent-profiles', ['scope', 'q']],
    ];
    const odd = ['', '-1', '1.5', '1e308', 'NaN', 'Infinity', '0x10', '%00', '%ZZ', 'x'.repeat(5_000), '__proto__', '[]', '{}'];
    for (const [url, params] of queries) {
      for (const param of [...params, 'unknown_param', '__proto__']) {
        for (const value of odd) await send('GET', `${url}?${param}=${value}`);
        await send('GET', `${url}?${param}=1&${param}=2`);
        await send('GET', `${url}?${param}[a]=1`);
      }
    }
    expect(failures).toEqual([]);
  });

  /**
   * Arguments for a tool, from its schema: a call with every property at a plain value of its type (the session,
   * profile or directory under test, by name); and, for a tool with an action (its first enum), for each action
   * the action alone, then with each other property at its plain value and at each odd value.
   */
  function argumentsFor(schema: ToolSchema): Array<{ payload: string; contentType: string }> {
    const props = Object.entries(schema.properties ?? {});
    const plain = (name: string, p: PropertySchema): unknown => {
      if (p.enum) return p.enum[0];
      if (name === 'session') return sessionId;
      if (name === 'profile_id') return profileId;
      if (name === 'dir') return cwd.path;
      if (name === 'profile') return { name: 'Tool fuzz' };
      return { string: 'x', integer: 1, number: 1, boolean: false, array: [], object: {} }[p.type ?? 'string'];
    };
    const all = Object.fromEntries(props.map(([name, p]) => [name, plain(name, p)]));
    const out = variants(all, Object.keys(all));
    const action = props.find(([, p]) => p.enum);
    for (const value of action?.[1].enum ?? []) {
      out.push(json({ [action![0]]: value }));
      for (const [name, p] of props) {
        if (name === action![0]) continue;
        out.push(json({ [action![0]]: value, [name]: plain(name, p) }));
        for (const odd of ODD_VALUES) out.push(json({ [action![0]]: value, [name]: odd }));
      }
    }
    return out;
  }

  it('given odd arguments, then every main-brain tool answers 4xx or 2xx, never 5xx', async () => {
    const tools = (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/tools' })).json().tools as Array<{ name: string; parameters: ToolSchema }>;
    expect(tools.length).toBeGreaterThan(5);
    for (const tool of tools) {
      for (const body of argumentsFor(tool.parameters)) await send('POST', `/session-os/main-brain/tools/${tool.name}`, body);
    }
    expect(failures).toEqual([]);
  });

  it('given odd JSON-RPC, odd headers and odd tool calls on the MCP endpoint, then it answers 4xx or 2xx, never 5xx', async () => {
    const rpc = (method: string, params?: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    const bodies = [
      ...ODD_BODIES.map((b) => b.payload),
      '{"jsonrpc":"2.0"}',
      rpc('tools/call', null),
      rpc('tools/call', { name: {}, arguments: [] }, {}),
      rpc('tools/call', { name: 'nope', arguments: {} }),
      rpc('resources/read', { uri: {} }),
      rpc('resources/read', { uri: 'brainstem://nope' }),
      rpc('prompts/get', { name: 'current_round', arguments: { x: 1 } }),
      rpc('__proto__'),
      `[${rpc('tools/list')},null]`,
      ...ODD_VALUES.map((odd) => rpc('tools/call', { name: 'send_to_session', arguments: { session: odd, text: odd } })),
    ];
    const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const payload of bodies) {
      for (const headers of [base, { ...base, 'x-brainstem-session': sessionId }, { ...base, 'x-brainstem-session': ' ' }, { ...base, accept: 'text/html' }]) {
        const res = await t.inject({ method: 'POST', url: '/mcp', payload, headers });
        if (res.statusCode >= 500) failures.push(`POST /mcp ${payload.slice(0, 80)} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('then the service still answers, nothing was polluted, and the journal verifies', async () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await t.inject({ method: 'GET', url: '/api/v1/health' })).statusCode).toBe(200);
    expect(await t.app.get<Journal>(JOURNAL).verify()).toMatchObject({ ok: true });
  });
});
