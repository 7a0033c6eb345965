import { SessionCommand, SessionDecision, decide, evolve } from './session.decider';
import { SessionEvent, SessionFact, SessionInput } from './session.events';
import { SessionSnapshot, createSession, stateOf } from './session.machine';
import { NETWORK_LOG_MAX } from './session.context';

const T = 5_000;

const input: SessionInput = {
  id: 'cs_net',
  alias: 'w1',
  title: 't',
  runtime: 'command',
  profile_id: 'sandboxed',
  cwd: '/repo',
  command: 'node',
  args: [],
  env: {},
  permission_deny: [],
  excluded: false,
  created_at: 1_000,
};

type Given = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'at'> : never) : never;
type When = SessionCommand extends infer C ? (C extends SessionCommand ? Omit<C, 'at'> : never) : never;
type Then = SessionFact extends infer E ? (E extends SessionFact ? Omit<E, 'at'> : never) : never;

const started: Given = { type: 'session.started', pid: 42, pid_start_time: '777', idle: false };

function given(events: Given[], over: Partial<SessionInput> = {}): SessionSnapshot {
  return events.reduce((s, e, i) => evolve(s, { ...e, at: 2_000 + i } as SessionEvent), createSession({ ...input, ...over }));
}
function when(state: SessionSnapshot, command: When): SessionDecision {
  return decide({ ...command, at: T } as SessionCommand, state);
}
function thenEvents(decision: SessionDecision, ...events: Then[]): void {
  expect(decision).toEqual({ events: events.map((e) => ({ ...e, at: T })) });
}
function thenRefused(decision: SessionDecision, code: string, message?: RegExp): void {
  expect(decision).toMatchObject({ error: { code, ...(message ? { message: expect.stringMatching(message) } : {}) } });
}
/** The state after the decision's events, as the command path adopts them. */
function after(state: SessionSnapshot, decision: SessionDecision): SessionSnapshot {
  if ('error' in decision) throw new Error(decision.error.message);
  return decision.events.reduce((s, e) => evolve(s, e), state);
}

const rules = (allow: string[] | null = [], deny: string[] | null = []) => ({ allow, deny });
const ask = (host: string, port = 443, r = rules(), request_id = 'net_1'): When => ({ type: 'ask_network', host, port, request_id, rules: r });
const networkRequest = (request_id: string, host: string, port = 443): Given => ({ type: 'session.permission_requested', request_id, tool: 'Network', input: { host, port } });
const resolve = (over: Partial<Extract<When, { type: 'resolve_permission' }>> = {}): When => ({
  type: 'resolve_permission',
  decision: 'allow',
  reason: null,
  profile_deny: [],
  home: '/h',
  by: 'user',
  network_deny: [],
  ...over,
});

describe('a sandboxed worker\'s network asks, and its Bash', () => {
  describe('on arrival, in order: profile deny, this session\'s allows, profile allow, else a Network request', () => {
    it('denies at once, journaled with the rule, when the profile\'s deny matches (even a host it also allows)', () => {
      const d = when(given([started]), ask('api.evil.com', 443, rules(['*.evil.com'], ['*.evil.com:443'])));
      thenEvents(d, {
        type: 'session.network_decided',
        host: 'api.evil.com',
        port: 443,
        decision: 'deny',
        by: 'profile',
        rule: '*.evil.com:443',
        reason: "profile sandboxed denies api.evil.com:443 (rule *.evil.com:443): a profile's deny always wins",
      });
      expect(stateOf(after(given([started]), d))).toBe('working');
    });

    it('allows a host:port the user allowed for this session earlier, without a request', () => {
      const allowedBefore: Given = { type: 'session.network_decided', host: 'example.com', port: 443, decision: 'allow', by: 'user', reason: null, request_id: 'net_0', scope: 'session' };
      const s = given([started, allowedBefore]);
      thenEvents(when(s, ask('EXAMPLE.com')), { type: 'session.network_decided', host: 'EXAMPLE.com', port: 443, decision: 'allow', by: 'session', reason: null, rule: 'example.com:443' });
      // Another port is another connection: asked.
      thenEvents(when(s, ask('example.com', 80)), { type: 'session.permission_requested', request_id: 'net_1', tool: 'Network', input: { host: 'example.com', port: 80 } });
    });

    it('allows a host the profile\'s allow matches now', () => {
      thenEvents(when(given([started]), ask('registry.npmjs.org', 443, rules(['*.npmjs.org']))), {
        type: 'session.network_decided',
        host: 'registry.npmjs.org',
        port: 443,
        decision: 'allow',
        by: 'profile',
        reason: null,
        rule: '*.npmjs.org',
      });
    });

    it('raises a Network permission request for a host no rule decides: the session waits in 待授权', () => {
      const s = given([started]);
      const d = when(s, ask('example.org', 8080, rules(['*.example.org'], ['evil.com'])));
      thenEvents(d, { type: 'session.permission_requested', request_id: 'net_1', tool: 'Network', input: { host: 'example.org', port: 8080 } });
      expect(stateOf(after(s, d))).toBe('pending_authorization');
    });

    it('reads a profile that cannot be read as no rules: the connection is asked', () => {
      thenEvents(when(given([started]), ask('example.org', 443, rules(null, null))), { type: 'session.permission_requested', request_id: 'net_1', tool: 'Network', input: { host: 'example.org', port: 443 } });
    });

    it('refuses an ask before the worker started and after the session exited', () => {
      thenRefused(when(given([]), ask('example.org')), 'session_not_started');
      thenRefused(when(given([started, { type: 'session.exited', code: 0, signal: null, reason: 'exited' }]), ask('example.org')), 'session_exited');
    });
  });

  describe('who may answer a Network request', () => {
    const waiting = given([started, networkRequest('net_1', 'example.org')]);

    it('the user\'s allow answers it: resolved and decided together, the session works again', () => {
      const d = when(waiting, resolve());
      thenEvents(
        d,
        { type: 'session.permission_resolved', request_id: 'net_1', decision: 'allow', reason: null },
        { type: 'session.network_decided', host: 'example.org', port: 443, decision: 'allow', by: 'user', reason: null, request_id: 'net_1', scope: 'once' },
      );
      expect(stateOf(after(waiting, d))).toBe('working');
    });

    it('the brain may deny it', () => {
      thenEvents(
        when(waiting, resolve({ decision: 'deny', reason: 'not needed', by: 'main_brain' })),
        { type: 'session.permission_resolved', request_id: 'net_1', decision: 'deny', reason: 'not needed' },
        { type: 'session.network_decided', host: 'example.org', port: 443, decision: 'deny', by: 'brain', reason: 'not needed', request_id: 'net_1' },
      );
    });

    it('the brain\'s allow is refused (network_allow_needs_user): allowing widens, so only the person may', () => {
      thenRefused(when(waiting, resolve({ by: 'main_brain' })), 'network_allow_needs_user', /only the person may allow w1's connection to example\.org:443/);
      // Absent `by` is not the user either.
      thenRefused(when(waiting, resolve({ by: undefined })), 'network_allow_needs_user');
    });

    it('the user\'s allow is refused when the profile\'s network deny matches it now, or cannot be read', () => {
      thenRefused(when(waiting, resolve({ network_deny: ['example.org'] })), 'denied_by_profile', /rule example\.org/);
      thenRefused(when(waiting, resolve({ network_deny: null })), 'denied_by_profile', /cannot read profile sandboxed/);
    });
  });

  describe('scopes', () => {
    const waiting = given([started, networkRequest('net_1', 'example.org')]);

    it('session: the host:port is remembered, so the next ask to it is allowed without a request', () => {
      const d = when(waiting, resolve({ scope: 'session' }));
      thenEvents(
        d,
        { type: 'session.permission_resolved', request_id: 'net_1', decision: 'allow', reason: null },
        { type: 'session.network_decided', host: 'example.org', port: 443, decision: 'allow', by: 'user', reason: null, request_id: 'net_1', scope: 'session' },
      );
      const s = after(waiting, d);
      expect(s.context.network_allowed).toEqual(['example.org:443']);
      thenEvents(when(s, ask('example.org', 443, rules(), 'net_2')), { type: 'session.network_decided', host: 'example.org', port: 443, decision: 'allow', by: 'session', reason: null, rule: 'example.org:443' });
    });

    it('profile: journaled with its scope (the service added the host to the profile before deciding)', () => {
      thenEvents(
        when(waiting, resolve({ scope: 'profile' })),
        { type: 'session.permission_resolved', request_id: 'net_1', decision: 'allow', reason: null },
        { type: 'session.network_decided', host: 'example.org', port: 443, decision: 'allow', by: 'user', reason: null, request_id: 'net_1', scope: 'profile' },
      );
    });

    it('a scope is refused on a request that is not a Network one, and a widening scope on a deny', () => {
      const bash = given([started, { type: 'session.permission_requested', request_id: 'r1', tool: 'Bash', input: { command: 'ls' } }]);
      thenRefused(when(bash, resolve({ scope: 'once' })), 'invalid_input', /^scope: only a Network request takes a scope; r1 asks for Bash/);
      thenRefused(when(waiting, resolve({ decision: 'deny', scope: 'session' })), 'invalid_input', /^scope: session widens an allow/);
    });
  });

  describe('a wait that ends unanswered', () => {
    const waiting = given([started, networkRequest('net_1', 'example.org')]);
    const end = (why: 'timeout' | 'abandoned'): When => ({ type: 'end_network_ask', request_id: 'net_1', host: 'example.org', port: 443, why, wait_s: 120 });

    it('a timeout denies the request, saying so, and the session works again', () => {
      const d = when(waiting, end('timeout'));
      const reason = 'no answer within 120 s (BRAINSTEM_SANDBOX_ASK_WAIT_S): denied';
      thenEvents(
        d,
        { type: 'session.permission_resolved', request_id: 'net_1', decision: 'deny', reason },
        { type: 'session.network_decided', host: 'example.org', port: 443, decision: 'deny', by: 'timeout', reason, request_id: 'net_1' },
      );
      expect(stateOf(after(waiting, d))).toBe('working');
    });

    it('the launcher gone denies it too', () => {
      expect(when(waiting, end('abandoned'))).toMatchObject({ events: [{ decision: 'deny' }, { by: 'abandoned', decision: 'deny' }] });
    });

    it('an answer that came first stands: nothing more is journaled', () => {
      const answered = after(waiting, when(waiting, resolve()));
      thenEvents(when(answered, end('timeout')));
    });

    it('a request cleared as the session moved on (its turn ended) is denied as withdrawn', () => {
      const cleared = given([started, networkRequest('net_1', 'example.org'), { type: 'session.turn_ended', result: null }]);
      expect(when(cleared, end('timeout'))).toMatchObject({ events: [{ type: 'session.network_decided', decision: 'deny', by: 'withdrawn', request_id: 'net_1' }] });
    });

    it('the session\'s exit ends it: the decision is journaled on the exited session', () => {
      const gone = given([started, networkRequest('net_1', 'example.org'), { type: 'session.exited', code: 0, signal: null, reason: 'exited' }]);
      thenEvents(when(gone, end('timeout')), {
        type: 'session.network_decided',
        host: 'example.org',
        port: 443,
        decision: 'deny',
        by: 'exited',
        reason: 'the session exited before the request was answered',
        request_id: 'net_1',
      });
    });
  });

  it('a refusal srt made on its own is journaled and listed', () => {
    const s = given([started]);
    const d = when(s, { type: 'report_network_refused', host: '169.254.169.254', port: 80, reason: 'host is on the deny list' });
    thenEvents(d, { type: 'session.network_refused', host: '169.254.169.254', port: 80, reason: 'host is on the deny list' });
    expect(after(s, d).context.network).toEqual([{ kind: 'refused', at: T, host: '169.254.169.254', port: 80, reason: 'host is on the deny list' }]);
  });

  it('the session keeps its latest network facts only', () => {
    const refusals: Given[] = Array.from({ length: NETWORK_LOG_MAX + 5 }, (_, i) => ({ type: 'session.network_refused', host: `h${i}.example.com`, port: 443, reason: 'r' }));
    const network = given([started, ...refusals]).context.network ?? [];
    expect(network).toHaveLength(NETWORK_LOG_MAX);
    expect(network[0]).toMatchObject({ host: 'h5.example.com' });
  });

  describe('Bash in a sandboxed session (sandbox.auto_allow_bash)', () => {
    const policy = { allow_write: ['/repo'], deny_write: [], deny_read: [], allow_read: [], network: { allow: [], deny: [] }, loopback_ports: [], tmp_dir: '/tmp/w', make_dirs: [] };
    const sandboxed = given([started], { sandbox: { on: true, policy } });
    const bash = (command: string, facts: { profile_deny?: string[] | null; sandbox_bash?: { auto_allow: boolean; ask: string[] } | null } = {}): When => ({
      type: 'report_permission_requested',
      request_id: 'r1',
      tool: 'Bash',
      input: { command },
      deny: { profile_deny: facts.profile_deny === undefined ? [] : facts.profile_deny, home: '/h', sandbox_bash: facts.sandbox_bash === undefined ? { auto_allow: true, ask: [] } : facts.sandbox_bash },
    });

    it('allows Bash that no deny or ask rule matches at once, journaled by the sandbox; the session keeps working', () => {
      const d = when(sandboxed, bash('npm test'));
      thenEvents(d, {
        type: 'session.permission_resolved',
        request_id: 'r1',
        decision: 'allow',
        reason: 'the worker runs in the OS sandbox and its profile lets Bash run there without asking (sandbox.auto_allow_bash)',
        by: 'sandbox',
        tool: 'Bash',
        input: { command: 'npm test' },
      });
      expect(stateOf(after(sandboxed, d))).toBe('working');
    });

    it('still denies what a deny rule matches, and still asks what an ask rule matches', () => {
      expect(when(sandboxed, bash('rm -rf /', { profile_deny: ['Bash(rm *)'] }))).toMatchObject({ events: [{ decision: 'deny', by: 'profile', rule: 'Bash(rm *)' }] });
      expect(when(sandboxed, bash('git push', { sandbox_bash: { auto_allow: true, ask: ['Bash(git push*)'] } }))).toMatchObject({ events: [{ type: 'session.permission_requested' }] });
    });

    it('asks when the profile turns it off or cannot be read, and for any tool but Bash', () => {
      expect(when(sandboxed, bash('ls', { sandbox_bash: { auto_allow: false, ask: [] } }))).toMatchObject({ events: [{ type: 'session.permission_requested' }] });
      expect(when(sandboxed, bash('ls', { sandbox_bash: null }))).toMatchObject({ events: [{ type: 'session.permission_requested' }] });
      expect(when(sandboxed, bash('ls', { profile_deny: null }))).toMatchObject({ events: [{ type: 'session.permission_requested' }] });
      const edit: When = { type: 'report_permission_requested', request_id: 'r2', tool: 'Edit', input: { file_path: '/repo/a' }, deny: { profile_deny: [], home: '/h', sandbox_bash: { auto_allow: true, ask: [] } } };
      expect(when(sandboxed, edit)).toMatchObject({ events: [{ type: 'session.permission_requested' }] });
    });

    it('never applies outside a sandbox', () => {
      expect(when(given([started]), bash('ls'))).toMatchObject({ events: [{ type: 'session.permission_requested' }] });
      expect(when(given([started], { sandbox: { on: false, reason: 'BRAINSTEM_SANDBOX is off' } }), bash('ls'))).toMatchObject({ events: [{ type: 'session.permission_requested' }] });
    });
  });

  it('a worker cannot raise a Network request itself: those are the sandbox\'s', () => {
    const d = when(given([started]), { type: 'signal', signal: { type: 'permission_request', tool: 'Network', input: { host: 'x.com', port: 1 }, request_id: 'r', deny: { profile_deny: [], home: '/h' } } });
    thenRefused(d, 'invalid_input', /^tool: Network requests are the sandbox's own/);
  });
});
