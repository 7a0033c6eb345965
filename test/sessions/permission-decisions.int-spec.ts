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

  /** Raises a request: pending (200), or denied as it arrives when a deny rule matches it (403 denied_by_profile). */
  async function ask(id: string, command: string, expected: 'pending' | 'denied' = 'pending'): Promise<Record<string, unknown>> {
    const res = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, payload: { type: 'permission_request', tool: 'Bash', input: { command } } });
    expect([res.statusCode, expected === 'pending' || res.json().code]).toEqual(expected === 'pending' ? [200, true] : [403, 'denied_by_profile']);
    return res.json() as Record<string, unknown>;
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

  /**
   * session.permission_resolved events with the command each answered, and `by: 'profile'` for those denied as they
   * arrived (which carry their request: no session.permission_requested was journaled for them).
   */
  async function resolutions(id: string): Promise<Array<{ request_id: string; decision: string; command: string | undefined; by?: string }>> {
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
        const d = e.data as { request_id: string; decision: string; by?: string; input?: { command?: string } };
        return { request_id: d.request_id, decision: d.decision, command: d.input?.command ?? commands.get(d.request_id), ...(d.by ? { by: d.by } : {}) };
      });
  }

  /** The states the session went through (its state_changed records). */
  async function states(id: string): Promise<string[]> {
    const events = await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
    return events.filter((e) => e.type === 'session.state_changed').map((e) => (e.data as { to: string }).to);
  }

  it.each([
    ['the user and the main brain', ALL_ROUTES],
    ['the main brain alone', ['brain-rest', 'brain-registry'] as Route[]],
  ])('%s allowing at once, without and with request ids, never allow a denied request: those are denied as they arrive', async (_who, routes) => {
    const s = await start(profileId);
    const outcomes = new Map<Route, Outcome[]>(routes.map((r) => [r, []]));
    const record = (route: Route, o: Outcome) => outcomes.get(route)!.push(o);
    const BURSTS = 12;
    let raising = true;

    // Requests arrive in bursts of three (two denied around one allowed), each burst once the last is journaled.
    const requester = async () => {
      for (let i = 0; i < BURSTS; i++) {
        await Promise.all([DENIED[i % DENIED.length], ALLOWED[i % ALLOWED.length], DENIED[(i + 1) % DENIED.length]].map((c) => ask(s.id, c, isDenied(c) ? 'denied' : 'pending')));
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
    // Reads what is pending and answers each by its id: tries to allow every request (from each route in turn), and
    // notes any that a deny rule matches (none should ever be pending).
    const offered: string[] = [];
    const decider = async () => {
      let turn = 0;
      while (!(await settled())) {
        for (const r of requestsOf(await status(s.id))) {
          if (isDenied(r.input.command)) offered.push(r.request_id);
          const route = routes[turn++ % routes.length];
          record(route, await decide(route, s.id, 'allow', r.request_id));
        }
        await tick();
      }
    };
    await Promise.all([requester(), decider(), ...routes.map((r) => blindAllower(r)())]);

    const resolved = await resolutions(s.id);
    expect(resolved.filter((r) => r.decision === 'allow' && isDenied(r.command))).toEqual([]);
    // Every request was answered exactly once: the ones the profile denies by the profile as they arrived, the others allowed.
    expect(resolved).toHaveLength(BURSTS * 3);
    expect(new Set(resolved.map((r) => r.request_id)).size).toBe(BURSTS * 3);
    for (const r of resolved) expect([r.command, r.decision, r.by]).toEqual([r.command, ...(isDenied(r.command) ? ['deny', 'profile'] : ['allow', undefined])]);
    // None of them was ever offered for an allow, nor refused one: there was nothing to refuse.
    expect(offered).toEqual([]);
    // Every allow answered a request, or found it answered by another first: none was refused.
    const seen = [...outcomes.values()].flat();
    expect(seen.filter((o) => o === 'answered')).toHaveLength(BURSTS);
    expect(seen.filter((o) => o !== 'answered' && o !== 'none_pending')).toEqual([]);
  });

  it('denies a request its profile denies as it arrives: 403 naming the rule, journaled with it, and the session never waits on it', async () => {
    const s = await start(profileId);
    const answer = await ask(s.id, 'rm -rf /tmp/x', 'denied');
    expect(answer).toMatchObject({
      statusCode: 403,
      code: 'denied_by_profile',
      message: `${s.alias}'s permission request ${String((answer.details as { request_id: string }).request_id)}: profile ${profileId} denies Bash (rule Bash(rm -rf *)): a profile's deny always wins`,
      details: { rule: 'Bash(rm -rf *)', profile_id: profileId, request_id: expect.stringMatching(/.+/) },
    });
    expect(await resolutions(s.id)).toEqual([{ request_id: (answer.details as { request_id: string }).request_id, decision: 'deny', command: 'rm -rf /tmp/x', by: 'profile' }]);
    const after = await status(s.id);
    expect([after.state, after.pending, after.queued_permissions]).toEqual(['working', null, []]);
    expect(await states(s.id)).not.toContain('pending_authorization');
    // Nothing is pending to allow.
    expect(await decide('user', s.id, 'allow')).toBe('none_pending');
  });

  it('names the rule when an allow is refused because the profile added the deny after the request arrived, on every route, and journals nothing for it', async () => {
    const id = await createProfile('Tightened Later', []);
    const s = await start(id);
    await ask(s.id, 'rm -rf /tmp/x');
    expect((await t.inject({ method: 'PATCH', url: `/api/v1/agent-profiles/${id}`, payload: { permissions: { deny: ['Bash(rm -rf *)'] } } })).statusCode).toBe(200);
    const user = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/permission`, payload: { decision: 'allow' } });
    expect(user.statusCode).toBe(403);
    expect(user.json()).toMatchObject({ code: 'denied_by_profile', message: expect.stringContaining(`profile ${id} denies Bash (rule Bash(rm -rf *))`) });
    const brain = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/resolve_permission', payload: { session: s.alias, decision: 'allow' } });
    expect(brain.statusCode).toBe(403);
    expect(brain.json()).toMatchObject({ code: 'denied_by_profile', message: expect.stringContaining('rule Bash(rm -rf *)') });
    expect(await resolutions(s.id)).toEqual([]);
    expect((await status(s.id)).state).toBe('pending_authorization');
    expect(await decide('user', s.id, 'deny')).toBe('answered');
    expect((await resolutions(s.id)).map((r) => r.decision)).toEqual(['deny']);
  });

  it("keeps the denies the session started with when its profile is loosened, and applies the profile's new ones, as requests arrive", async () => {
    const id = await createProfile('Loosened Later', ['Bash(rm -rf *)']);
    const s = await start(id);
    expect((await t.inject({ method: 'PATCH', url: `/api/v1/agent-profiles/${id}`, payload: { permissions: { deny: ['Bash(curl *)'] } } })).statusCode).toBe(200);
    expect((await ask(s.id, 'rm -rf build', 'denied')).details).toMatchObject({ rule: 'Bash(rm -rf *)' });
    expect((await ask(s.id, 'curl https://example.com', 'denied')).details).toMatchObject({ rule: 'Bash(curl *)' });
    await ask(s.id, 'ls');
    expect(await decide('user', s.id, 'allow')).toBe('answered');
    expect((await resolutions(s.id)).map((r) => [r.command, r.decision, r.by ?? 'user'])).toEqual([
      ['rm -rf build', 'deny', 'profile'],
      ['curl https://example.com', 'deny', 'profile'],
      ['ls', 'allow', 'user'],
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
