import { MemoryCredentialStore as MemoryStore } from '../../test/support/memory-credential-store';
import { Credentials, WORKER_MACS_KEPT } from './credentials';

describe('credentials', () => {
  it('given session ids of every shape, then each worker token proves its own session (a MAC may hold _ or -)', () => {
    const c = new Credentials(new MemoryStore(), { configuredUserToken: null });
    for (let i = 0; i < 200; i++) expect(c.authenticate(c.workerToken(`cs_${i}_x`))).toEqual({ kind: 'worker', session_id: `cs_${i}_x` });
  });

  it('given a fresh store, then a user, a brain and a worker key are created, and each token proves its own principal', () => {
    const store = new MemoryStore();
    const c = new Credentials(store, { configuredUserToken: null });
    expect(c.authenticate(store.values.get('api-token') as string)).toEqual({ kind: 'user' });
    expect(c.authenticate(c.brainToken())).toEqual({ kind: 'main_brain' });
    expect(c.authenticate(c.workerToken('cs_abc'))).toEqual({ kind: 'worker', session_id: 'cs_abc' });
    expect(c.userTokenSource()).toBe('/data/api-token');
  });

  it('given a worker token, when its session id or its MAC is changed, then it proves nothing', () => {
    const c = new Credentials(new MemoryStore(), { configuredUserToken: null });
    const token = c.workerToken('cs_abc');
    const mac = token.slice(token.lastIndexOf('.') + 1);
    expect(c.authenticate(`bsw_cs_abd.${mac}`)).toBeNull();
    expect(c.authenticate(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'))).toBeNull();
    expect(c.authenticate('bsw_cs_abc')).toBeNull();
    expect(c.authenticate('bsw_.')).toBeNull();
    expect(c.authenticate(`bsw_cs_abc.${mac}.`)).toBeNull();
    expect(c.authenticate('')).toBeNull();
  });

  it('given the same store, when the service restarts, then the worker tokens it minted still hold (a worker outlives a restart)', () => {
    const store = new MemoryStore();
    const before = new Credentials(store, { configuredUserToken: null }).workerToken('cs_1');
    expect(new Credentials(store, { configuredUserToken: null }).authenticate(before)).toEqual({ kind: 'worker', session_id: 'cs_1' });
    expect(new Credentials(new MemoryStore(), { configuredUserToken: null }).authenticate(before)).toBeNull();
  });

  it('given BRAINSTEM_API_TOKEN, then it is the user token, no token is stored, and rotating the user token is refused', () => {
    const store = new MemoryStore();
    const c = new Credentials(store, { configuredUserToken: 'from-env' });
    expect(c.authenticate('from-env')).toEqual({ kind: 'user' });
    expect(store.values.has('api-token')).toBe(false);
    expect(c.userTokenSource()).toBe('BRAINSTEM_API_TOKEN');
    expect(() => c.rotate('user')).toThrow(/BRAINSTEM_API_TOKEN/);
  });

  it('when the brain token is rotated, then the old one proves nothing and the store holds the new one', () => {
    const store = new MemoryStore();
    const c = new Credentials(store, { configuredUserToken: null });
    const old = c.brainToken();
    const { token } = c.rotate('main_brain');
    expect(c.authenticate(old)).toBeNull();
    expect(c.authenticate(token)).toEqual({ kind: 'main_brain' });
    expect(store.values.get('brain-token')).toBe(token);
    expect(c.brainToken()).toBe(token);
  });

  it('given an action capability, then its token proves an action principal on the action route only, and a changed id or MAC proves nothing', () => {
    const c = new Credentials(new MemoryStore(), { configuredUserToken: null });
    const token = c.actionToken('ac_abc');
    expect(c.authenticateAction(token)).toEqual({ kind: 'action', capability_id: 'ac_abc' });
    // Not a bearer token of any other route
    expect(c.authenticate(token)).toBeNull();
    const mac = token.slice(token.lastIndexOf('.') + 1);
    expect(c.authenticateAction(`bsa_ac_abd.${mac}`)).toBeNull();
    expect(c.authenticateAction(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'))).toBeNull();
    expect(c.authenticateAction(c.workerToken('cs_1'))).toBeNull();
    expect(c.authenticateAction('bsa_.x')).toBeNull();
    expect(c.authenticateAction('bsa_ac/../x.y')).toBeNull();
    // Another service's key proves nothing
    expect(new Credentials(new MemoryStore(), { configuredUserToken: null }).authenticateAction(token)).toBeNull();
  });

  it('given a worker token proven once, when it is presented again, or with another MAC for the same session, then the first proves its session and the other nothing', () => {
    const c = new Credentials(new MemoryStore(), { configuredUserToken: null });
    const token = c.workerToken('cs_abc');
    expect(c.authenticate(token)).toEqual({ kind: 'worker', session_id: 'cs_abc' });
    expect(c.authenticate(token)).toEqual({ kind: 'worker', session_id: 'cs_abc' });
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect(c.authenticate(forged)).toBeNull();
    expect(c.authenticate(`${token}A`)).toBeNull();
    expect(c.authenticate(token)).toEqual({ kind: 'worker', session_id: 'cs_abc' });
  });

  it('given more workers than the MACs kept, when each proves its token in turn and the first again, then every one proves its own session', () => {
    const c = new Credentials(new MemoryStore(), { configuredUserToken: null });
    const ids = Array.from({ length: WORKER_MACS_KEPT + 10 }, (_, i) => `cs_${i}`);
    for (const id of [...ids, ids[0]]) expect(c.authenticate(c.workerToken(id))).toEqual({ kind: 'worker', session_id: id });
  });

  it('given BRAINSTEM_API_TOKEN shaped like a worker token, when it is presented, then it proves the user', () => {
    const c = new Credentials(new MemoryStore(), { configuredUserToken: 'bsw_cs_1.mine' });
    expect(c.authenticate('bsw_cs_1.mine')).toEqual({ kind: 'user' });
    expect(c.authenticate(c.workerToken('cs_1'))).toEqual({ kind: 'worker', session_id: 'cs_1' });
  });
});
