import { join } from 'node:path';
import { DomainError } from '../../src/common/domain-error';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { ToolRegistry } from '../../src/main-brain/tool-registry';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { WORKERS, WorkerReaper } from '../support/workers';

type Request = { request_id: string; tool: string; input: { command?: string } };
type Status = { id: string; alias: string; state: string; pid: number | null; pending: (Request & { kind: string }) | null; queued_permissions: Request[] };
type Route = 'user' | 'brain-rest' | 'brain-registry';
/** answered 200; refused 403 denied_by_profile; none_pending 409 permission_not_pending (another decision answered it first). Anything else is kept as is. */
type Outcome = 'answered' | 'refused' | 'none_pending' | string;

const DENIES = ['Bash(rm -rf *)', 'Bash(git push:*)'];
/**
 * Commands those rules deny and commands they do not, sorted by hand (not by the matcher under test). Plain ones,
 * which the old matcher judged right too: here only the interleaving is under test (permission-rules.spec.ts has the syntax).
 */
const DENIED = ['rm -rf build', 'git push origin main', 'rm -rf node_modules', 'git push --force'];
const ALLOWED = ['ls -la', 'rm notes.txt', 'git status', 'npm test'];
const isDenied = (command: string | undefined): boolean => {
  if (command === undefined || ![...DENIED, ...ALLOWED].includes(command)) throw new Error(`not a command of this test: ${command}`);
  return DENIED.includes(command);
};
const ALL_ROUTES: Route[] = ['user', 'brain-rest', 'brain-registry'];

/** Yields to I/O between calls, so loops of in-process calls never starve the journal's writes. Not a timed sleep. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Permission decisions are judged inside the session's mailbox on the request they answer: a profile's deny wins
 * over every allow, from the main brain (registry, REST tool route) and from the user's REST route, whatever the
 * interleaving with requests arriving and other decisions.
 */
describe('permission decisions on a session whose profile denies', () => {
  let profileId: string;
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-perm-cwd-');
  const quiet = { command: process.execPath, args: [join(WORKERS, 'quiet.js')] };

  const t = useTestApp({}, { beforeClose: () => reaper.killAll() });
  beforeAll(async () => {
    profileId = await createProfile('Guarded', DENIES);
  });
  afterEach(() => reaper.killAll());
  afterAll(() => cwd.remove());

  async function createProfile(name: string, deny: string[]): Promise<string> {
    const res = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name, permissions: { deny } } });
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  }

  async function start(profile: string): Promise<Status> {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { ...quiet, cwd: cwd.path, profile_id: profile } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json() as Status;
  }

  const status = async (id: string): Promise<Status> => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json() as Status;
  const requestsOf = (s: Status): Request[] => (s.pending?.kind === 'permission' ? [s.pending, ...s.queued_permissions] : []);

  async function ask(id: string, command: string): Promise<void> {
    const res = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, payload: { type: 'permission_request', tool: 'Bash', input: { command } } });
    expect(res.statusCode).toBe(200);
  }

  async function decide(route: Route, session: string, decision: 'allow' | 'deny', requestId?: string): Promise<Outcome> {
    const args = { session, decision, ...(requestId === undefined ? {} : { request_id: requestId }) };
    if (route === 'brain-registry') {
      try {
        await t.app.get(ToolRegistry).call('resolve_permission', args, 'main_brain', { actor: 'main_brain' });
        return 'answered';
      } catch (e) {
        const code = (e as DomainError).code;
        return code === 'denied_by_profile' ? 'refused' : code === 'permission_not_pending' ? 'none_pending' : String(e);
      }
    }
    const res =
      route === 'user'
        ? await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${session}/permission`, payload: { decision, ...(requestId === undefined ? {} : { request_id: requestId }) } })
        : await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/resolve_permission', payload: args });
    const code = res.statusCode === 200 ? null : (res.json().code as string);
    if (res.statusCode === 200) return 'answered';
    if (res.statusCode === 403 && code === 'denied_by_profile') return 'refused';
    if (res.statusCode === 409 && code === 'permission_not_pending') return 'none_pending';
    return `${res.statusCode} ${code}`;
  }

  /** session.permission_resolved events with the command each answered. */
  async function resolutions(id: string): Promise<Array<{ request_id: string; decision: string; command: string | undefined }>> {
    const events = await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
    const commands = new Map<string, string | undefined>();
    for (const e of events) {
      if (e.type === 'session.permission_requested') {
        const d = e.data as { request_id: string; input: { command?: string } };
        commands.set(d.request_id, d.input.command);
      }
    }
    return events
      .filter((e) => e.type === 'session.permission_resolved')
      .map((e) => {
        const d = e.data as { request_id: string; decision: string };
        return { request_id: d.request_id, decision: d.decision, command: commands.get(d.request_id) };
      });
  }

  it.each([
    ['the user and the main brain', ALL_ROUTES],
    ['the main brain alone', ['brain-rest', 'brain-registry'] as Route[]],
  ])('%s allowing at once, without and with request ids, never allow a denied request', async (_who, routes) => {
    const s = await start(profileId);
    const outcomes = new Map<Route, Outcome[]>(routes.map((r) => [r, []]));
    const record = (route: Route, o: Outcome) => outcomes.get(route)!.push(o);
    const BURSTS = 12;
    let raising = true;

    // Requests arrive in bursts of three (two denied around one allowed), each burst once the last is journaled.
    const requester = async () => {
      for (let i = 0; i < BURSTS; i++) {
        await Promise.all([DENIED[i % DENIED.length], ALLOWED[i % ALLOWED.length], DENIED[(i + 1) % DENIED.length]].map((c) => ask(s.id, c)));
      }
      raising = false;
    };
    const settled = async () => !raising && requestsOf(await status(s.id)).length === 0;
    // Allows naming no request, as fast as they come back: most land while nothing is pending yet, or a request is being journaled.
    const blindAllower = (route: Route) => async () => {
      while (!(await settled())) {
        record(route, await decide(route, s.id, 'allow'));
        await tick();
      }
    };
    // Reads what is pending and answers each by its id: tries to allow every request (from each route in turn),
    // then denies what was refused, as a user would.
    const decider = async () => {
      const turns = { denied: 0, allowed: 0 };
      while (!(await settled())) {
        for (const r of requestsOf(await status(s.id))) {
          const denied = isDenied(r.input.command);
          const route = routes[turns[denied ? 'denied' : 'allowed']++ % routes.length];
          const allowed = await decide(route, s.id, 'allow', r.request_id);
          record(route, allowed);
          if (allowed === 'refused') await decide('user', s.id, 'deny', r.request_id);
        }
        await tick();
      }
    };
    await Promise.all([requester(), decider(), ...routes.map((r) => blindAllower(r)())]);

    const resolved = await resolutions(s.id);
    expect(resolved.filter((r) => r.decision === 'allow' && isDenied(r.command))).toEqual([]);
    // Every request was answered exactly once: the ones the profile denies denied, the others allowed.
    expect(resolved).toHaveLength(BURSTS * 3);
    expect(new Set(resolved.map((r) => r.request_id)).size).toBe(BURSTS * 3);
    for (const r of resolved) expect([r.command, r.decision]).toEqual([r.command, isDenied(r.command) ? 'deny' : 'allow']);
    // Each route was refused at least once (the decider's allow of a denied request by id), and answered nothing else.
    for (const route of routes) {
      const seen = outcomes.get(route)!;
      expect(seen).toContain('refused');
      expect(seen.filter((o) => o !== 'answered' && o !== 'refused' && o !== 'none_pending')).toEqual([]);
    }
  });

  it('names the rule in the refusal, on every route, and journals nothing for it', async () => {
    const s = await start(profileId);
    await ask(s.id, 'rm -rf /tmp/x');
    const user = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/permission`, payload: { decision: 'allow' } });
    expect(user.statusCode).toBe(403);
    expect(user.json()).toMatchObject({ code: 'denied_by_profile', message: expect.stringContaining(`profile ${profileId} denies Bash (rule Bash(rm -rf *))`) });
    const brain = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/resolve_permission', payload: { session: s.alias, decision: 'allow' } });
    expect(brain.statusCode).toBe(403);
    expect(brain.json()).toMatchObject({ code: 'denied_by_profile', message: expect.stringContaining('rule Bash(rm -rf *)') });
    expect(await resolutions(s.id)).toEqual([]);
    expect((await status(s.id)).state).toBe('pending_authorization');
    expect(await decide('user', s.id, 'deny')).toBe('answered');
    expect((await resolutions(s.id)).map((r) => r.decision)).toEqual(['deny']);
  });

  it("keeps the denies the session started with when its profile is loosened, and applies the profile's new ones", async () => {
    const id = await createProfile('Loosened Later', ['Bash(rm -rf *)']);
    const s = await start(id);
    expect((await t.inject({ method: 'PATCH', url: `/api/v1/agent-profiles/${id}`, payload: { permissions: { deny: ['Bash(curl *)'] } } })).statusCode).toBe(200);
    await ask(s.id, 'rm -rf build');
    expect(await decide('brain-rest', s.id, 'allow')).toBe('refused');
    await decide('user', s.id, 'deny');
    await ask(s.id, 'curl https://example.com');
    expect(await decide('user', s.id, 'allow')).toBe('refused');
    await decide('user', s.id, 'deny');
    await ask(s.id, 'ls');
    expect(await decide('user', s.id, 'allow')).toBe('answered');
    expect((await resolutions(s.id)).map((r) => [r.command, r.decision])).toEqual([
      ['rm -rf build', 'deny'],
      ['curl https://example.com', 'deny'],
      ['ls', 'allow'],
    ]);
  });

  it('refuses every allow while the profile cannot be read (fails closed); a deny still answers', async () => {
    const id = await createProfile('Deleted Later', []);
    const s = await start(id);
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/agent-profiles/${id}` })).statusCode).toBeLessThan(300);
    await ask(s.id, 'ls');
    const refused = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/permission`, payload: { decision: 'allow' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'denied_by_profile', message: expect.stringContaining(`cannot read profile ${id}`) });
    expect(await decide('user', s.id, 'deny')).toBe('answered');
    expect((await resolutions(s.id)).map((r) => r.decision)).toEqual(['deny']);
  });
});
