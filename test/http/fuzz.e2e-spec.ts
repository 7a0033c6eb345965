import { mkdirSync, symlinkSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import type { InjectOptions } from 'fastify';
import { join } from 'node:path';
import { API_PREFIX } from '../../src/app.factory';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { findExecutable } from '../../src/common/executable';
import { FuzzInput, FuzzRequest, Vocabulary } from '../support/fuzz-input';
import { RouteEntry, RouteFields, listRoutes, routeFields } from '../support/route-list';
import { SeededRandom } from '../support/seeded-random';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';

/**
 * Fixed seeds, so the suite is repeatable; BRAINSTEM_FUZZ_SEED=<n> runs another one (a failure prints its seed and
 * request). A seed replays the same requests as long as the service answers them the same way (the generator learns
 * words from the answers).
 */
const SEEDS = process.env.BRAINSTEM_FUZZ_SEED ? [Number(process.env.BRAINSTEM_FUZZ_SEED)] : [20_251_125];
/** Requests per route and method, in random order across routes. */
const PER_ROUTE = Number(process.env.BRAINSTEM_FUZZ_PER_ROUTE ?? 80);

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Every route of the running app (read from Fastify, so a new route is fuzzed without editing this file), plus
 * JSON-RPC on /mcp, fed thousands of generated requests: no answer is a 5xx, every 4xx has the error shape, and
 * afterwards the service answers, the journal verifies and every profile file on disk still parses.
 *
 * Nothing a fuzzed request asks for can run a program but `true` (POST /coding-sessions runs the command it is given,
 * or the agent CLI its runtime names): the service runs with PATH set to a directory holding only `true` (so runtime
 * `auto` or `claude-code` finds no agent CLI and no other name resolves), any key named `command` gets a value from a
 * small set in which only `true` is runnable, and the only absolute paths the generator writes are this test's temp
 * directories (an empty project directory, where a fuzzed profile apply may write, and a missing one). Keeping
 * valid-shaped session bodies out altogether would leave the success paths of that route unfuzzed; the last test
 * checks in the journal that nothing else was started.
 */
describe('fuzzing every route', () => {
  const dir = tempDir('brainstem-fuzz-');
  const originalPath = process.env.PATH;
  let routes: RouteEntry[];
  let fields: Map<string, RouteFields>;
  let prototypeKeys: string[];
  let project: string;
  let fixtureSession: string;
  let sleepBin: string;
  let trueLink: string;

  // Before the app starts, so it sees this PATH too.
  beforeAll(() => {
    prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
    const trueBin = findExecutable('true', originalPath ?? '', '/');
    const sleep = findExecutable('sleep', originalPath ?? '', '/');
    if (!trueBin || !sleep) throw new Error('the fuzz test needs true and sleep on PATH');
    sleepBin = sleep;
    project = join(dir.path, 'project');
    const bin = join(dir.path, 'bin');
    mkdirSync(join(project, 'sub'), { recursive: true });
    mkdirSync(bin);
    trueLink = join(bin, 'true');
    symlinkSync(trueBin, trueLink);
    process.env.PATH = bin;
  });
  // Without fsync per commit: thousands of requests on a slow disk; verification does not depend on it.
  const t = useTestApp(
    { BRAINSTEM_JOURNAL_SYNC: 'false' },
    { beforeClose: (app) => app.inject({ method: 'POST', url: `/api/v1/coding-sessions/${fixtureSession}/stop`, payload: { grace_ms: 0 } }) },
  );

  beforeAll(async () => {
    routes = listRoutes(t.app.getHttpAdapter().getInstance());
    fields = routeFields(t.app, API_PREFIX);
    // A live session and a user profile, so routes with an id reach past "not found".
    const session = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: project, command: sleepBin, args: ['600'] } });
    expect(session.statusCode).toBe(201);
    fixtureSession = session.json().id;
    const profile = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'Fuzz fixture', default_cwd: project } });
    expect(profile.statusCode).toBe(201);
  });

  afterAll(() => {
    process.env.PATH = originalPath;
    dir.remove();
  });

  it('reads a route list that covers every controller, the health route and /mcp, and the fields of their DTOs', () => {
    const seen = new Set(routes.map((r) => `${r.method} ${r.url}`));
    expect(routes.length).toBeGreaterThan(50);
    for (const route of ['GET /api/v1/health', 'POST /mcp', 'POST /api/v1/coding-sessions', 'PATCH /api/v1/agent-profiles/:id', 'GET /api/v1/events/stream', 'POST /api/v1/workflow-runs/:id/converge']) {
      expect(seen).toContain(route);
    }
    expect(fields.get('POST /api/v1/coding-sessions')?.body.map((f) => f.key)).toEqual(expect.arrayContaining(['cwd', 'command', 'runtime']));
    expect(fields.get('GET /api/v1/journal/events')?.query.map((f) => f.key)).toEqual(expect.arrayContaining(['after_seq', 'limit']));
    // Every controller route is one Fastify serves.
    for (const key of fields.keys()) expect(seen).toContain(key);
  });

  function learn(vocabulary: Vocabulary, answer: Answer): void {
    if (!answer.contentType.startsWith('application/json') || answer.body.length > 200_000) return;
    try {
      vocabulary.harvest(JSON.parse(answer.body));
    } catch {
      // Not JSON after all: nothing to learn (problem() judges the answer).
    }
  }

  async function send(req: FuzzRequest): Promise<Answer> {
    const res = await t.inject({ ...req, method: req.method as InjectOptions['method'], payloadAsStream: true });
    const contentType = String(res.headers['content-type'] ?? '');
    const stream = res.stream();
    // An event stream never ends: closing the response is the client going away.
    if (contentType.startsWith('text/event-stream')) {
      (res.raw.res as ServerResponse).destroy();
      stream.destroy();
      return { status: res.statusCode, contentType, body: '' };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { status: res.statusCode, contentType, body: Buffer.concat(chunks).toString('utf8') };
  }

  function fuzzInput(seed: number, vocabulary: Vocabulary): FuzzInput {
    return new FuzzInput(new SeededRandom(seed), vocabulary, {
      paths: [project, join(project, 'sub'), join(dir.path, 'missing', 'x'), `${project}/../project/./`],
      root: dir.path,
      commands: ['true', '', ' ', 'no-such-brainstem-command', 'true\u0000', '../true', 'tr ue', 'x'.repeat(5_000)],
      bodyLimit: t.config.server.body_limit_bytes,
    });
  }

  it('generates the same requests from the same seed', () => {
    const vocabulary = new Vocabulary(dir.path);
    for (const word of ['name', 'cwd', 'text', 'plan']) vocabulary.add('keys', word);
    const run = (seed: number) => {
      const fuzz = fuzzInput(seed, vocabulary);
      return routes.map((r) => fuzz.request(r.method, r.url, fields.get(`${r.method} ${r.url}`)));
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });

  /** What is wrong with an answer, or null. */
  function problem(req: FuzzRequest, answer: Answer): string | null {
    if (answer.status >= 500) return `answered ${answer.status}`;
    if (answer.status < 400 || req.method === 'HEAD') return null;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      return `a ${answer.status} whose body is not JSON`;
    }
    // MCP clients read JSON-RPC errors; its transport answers protocol faults that way.
    const rpcError = body?.error as { code?: unknown; message?: unknown } | undefined;
    if (req.url.startsWith('/mcp') && body?.jsonrpc === '2.0' && typeof rpcError?.code === 'number' && typeof rpcError.message === 'string' && rpcError.message) return null;
    const filled = (v: unknown) => typeof v === 'string' && v.trim() !== '';
    if (body?.statusCode === answer.status && filled(body.error) && filled(body.code) && filled(body.message)) return null;
    return `a ${answer.status} without {statusCode, error, code, message}`;
  }

  function report(seed: number, n: number, req: FuzzRequest, answer: Answer, what: string): string {
    const payload = req.payload ?? '';
    return [
      `seed ${seed} request #${n}: ${what}`,
      `  ${req.method} ${req.url.length > 400 ? `${req.url.slice(0, 400)}… (${req.url.length} chars)` : req.url}`,
      `  headers ${JSON.stringify(req.headers)}`,
      `  body (${payload.length} chars) ${JSON.stringify(payload.slice(0, 600))}`,
      `  -> ${answer.status} ${answer.body.slice(0, 400)}`,
    ].join('\n');
  }

  for (const seed of SEEDS) {
    it(`seed ${seed}: no request to any route gets a 5xx, and every 4xx names what was wrong`, async () => {
      const vocabulary = new Vocabulary(dir.path);
      const fuzz = fuzzInput(seed, vocabulary);
      for (const { body, query } of fields.values()) {
        for (const { key, words } of [...body, ...query]) {
          vocabulary.add('keys', key);
          for (const word of words) if (typeof word === 'string') vocabulary.add('words', word);
        }
      }
      // The app's own answers seed the words: every GET without a parameter, and what /mcp lists.
      for (const route of routes.filter((r) => r.method === 'GET' && !r.url.includes(':'))) {
        const answer = await send({ method: 'GET', url: route.url, headers: {} });
        learn(vocabulary, answer);
      }
      for (const method of ['tools/list', 'resources/list', 'prompts/list']) {
        const answer = await send({
          method: 'POST',
          url: '/mcp',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
        });
        learn(vocabulary, answer);
      }
      expect(vocabulary.keys.length).toBeGreaterThan(30);

      // Every route, and every path with methods it does not take.
      const served = new Set(routes.map((r) => `${r.method} ${r.url}`));
      const unserved = [...new Set(routes.map((r) => r.url))].flatMap((url) =>
        ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'].filter((m) => !served.has(`${m} ${url}`)).map((method) => ({ method, url })),
      );
      const schedule = [...routes, ...unserved].flatMap((r) => Array.from({ length: served.has(`${r.method} ${r.url}`) ? PER_ROUTE : 4 }, () => r));
      for (let i = schedule.length - 1; i > 0; i--) {
        const j = fuzz.random.int(i + 1);
        [schedule[i], schedule[j]] = [schedule[j], schedule[i]];
      }
      const failures = new Map<string, string>();
      const statuses = new Map<number, number>();
      for (const [n, route] of schedule.entries()) {
        const req = fuzz.request(route.method, route.url, fields.get(`${route.method === 'HEAD' ? 'GET' : route.method} ${route.url}`));
        const answer = await send(req);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const wrong = problem(req, answer);
        // One example per route, method and kind of failure.
        const key = `${route.method} ${route.url} ${wrong}`;
        if (wrong && !failures.has(key)) failures.set(key, report(seed, n, req, answer, wrong));
        if (answer.status < 300) learn(vocabulary, answer);
      }
      console.log(`fuzz seed ${seed}: ${schedule.length} requests over ${routes.length} routes and ${unserved.length} unserved methods; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
      expect([...failures.values()]).toEqual([]);
      // The generator reaches both sides: requests the service takes (something was created) and ones it refuses.
      expect(statuses.get(201)).toBeGreaterThan(0);
      expect(statuses.get(400)).toBeGreaterThan(0);
    });
  }

  it('then the service still answers, nothing was polluted, the journal verifies, every profile file on disk parses and nothing but true ran', async () => {
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
    expect((await t.inject({ method: 'GET', url: '/api/v1/health' })).statusCode).toBe(200);
    const verify = await t.inject({ method: 'GET', url: '/api/v1/journal/verify' });
    expect(verify.statusCode).toBe(200);
    expect(verify.json()).toMatchObject({ ok: true });
    const list = await t.inject({ method: 'GET', url: '/api/v1/agent-profiles' });
    expect(list.statusCode).toBe(200);
    expect((list.json().profiles as Array<{ id: string; error: string | null }>).filter((p) => p.error !== null)).toEqual([]);
    const ran = new Set<string>();
    const journal = t.app.get<Journal>(JOURNAL);
    for (let after = 0, page = await journal.readAll(0, 1_000); page.length > 0; page = await journal.readAll(after, 1_000)) {
      for (const e of page) {
        after = e.seq;
        if (e.type === 'session.created') ran.add(`${(e.data as { runtime: string }).runtime} ${(e.data as { command: string | null }).command}`);
      }
    }
    expect([...ran].filter((r) => r !== `command ${sleepBin}` && r !== `command ${trueLink}`)).toEqual([]);
  });
});
