import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../common/domain-error';
import { Principal } from './principal';

/** Where the service's secrets live and how a new one is kept (files of mode 0600 in the data directory). */
export interface CredentialStore {
  /** The stored secret, created (random, kept with owner-only access) when missing. */
  loadOrCreate(name: SecretName, create: () => string): string;
  /** The stored secret, or null when there is none (nothing is created). */
  load(name: SecretName): string | null;
  replace(name: SecretName, value: string): void;
  pathOf(name: SecretName): string;
}

/** vapid-keys: the Web Push key pair (JSON), kept here for the same reasons as the tokens. */
export type SecretName = 'api-token' | 'brain-token' | 'worker-key' | 'action-key' | 'vapid-keys' | 'hook-token';

const USER_PREFIX = 'bsu_';
const BRAIN_PREFIX = 'bsb_';
const WORKER_PREFIX = 'bsw_';
const ACTION_PREFIX = 'bsa_';
/** What a capability id may be: it is part of a URL path. */
const CAPABILITY_ID = /^[A-Za-z0-9_-]{1,64}$/;
const HOOK_PREFIX = 'bsh_';

const digest = (s: string) => createHash('sha256').update(s).digest();
/** Worker MACs kept, of the sessions whose tokens were proven last: one per live worker is what a busy node needs. */
export const WORKER_MACS_KEPT = 4096;
const randomToken = (prefix: string) => prefix + randomBytes(32).toString('base64url');

function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface CredentialsOptions {
  /** BRAINSTEM_API_TOKEN: when set it is the user's token and no token file is written. */
  configuredUserToken: string | null;
}

/**
 * The four kinds of credential. User, brain and hook tokens are random secrets kept in the store (the hook token only
 * once the claude hooks are installed: `hookToken`); a worker's is
 * `bsw_<session id>.<HMAC(worker key, session id)>`, so it needs no table, is the same after a restart for a
 * worker that outlived it, and names its session. Revocation at exit is the caller's check that the session
 * still runs (a worker credential for an exited session is refused where it is used).
 */
export class Credentials {
  private userDigest: Buffer;
  private brain: string;
  private brainDigest: Buffer;
  private readonly workerKey: Buffer;
  private readonly actionKey: Buffer;
  private hookDigest: Buffer | null;
  /**
   * The MAC each recently proven worker token carries, by session id: a worker signals many times, and the HMAC was
   * most of checking its token. Only a token whose MAC was computed and matched adds one.
   */
  private readonly workerMacs = new Map<string, Buffer>();
  /** Whether the user's, brain's or hook's token could be read as a worker token: then every token is digested first. */
  private workerShapedSecret: boolean;

  constructor(
    private readonly store: CredentialStore,
    private readonly options: CredentialsOptions,
  ) {
    const user = options.configuredUserToken ?? store.loadOrCreate('api-token', () => randomToken(USER_PREFIX));
    this.userDigest = digest(user);
    this.brain = store.loadOrCreate('brain-token', () => randomToken(BRAIN_PREFIX));
    this.brainDigest = digest(this.brain);
    this.workerKey = Buffer.from(store.loadOrCreate('worker-key', () => randomBytes(32).toString('base64url')), 'utf8');
    this.actionKey = Buffer.from(store.loadOrCreate('action-key', () => randomBytes(32).toString('base64url')), 'utf8');
    const hook = store.load('hook-token');
    this.hookDigest = hook === null ? null : digest(hook);
    this.workerShapedSecret = [user, this.brain, hook].some((t) => t?.startsWith(WORKER_PREFIX));
  }

  /**
   * The claude hooks' token and its file (mode 0600), created the first time the hooks are installed. The hooks read it
   * from the file at each event, so a rotation reaches them without installing again.
   */
  hookToken(): { path: string } {
    const token = this.store.loadOrCreate('hook-token', () => randomToken(HOOK_PREFIX));
    this.hookDigest = digest(token);
    this.workerShapedSecret = this.workerShapedSecret || token.startsWith(WORKER_PREFIX);
    return { path: this.store.pathOf('hook-token') };
  }

  /** Where the user's token is, for the start-up line: a file path, or the variable that set it. */
  userTokenSource(): string {
    return this.options.configuredUserToken !== null ? 'BRAINSTEM_API_TOKEN' : this.store.pathOf('api-token');
  }

  /** The files holding what the brain must never read: the user's token, the key workers' tokens are minted with, the hooks' token. */
  secretFiles(): string[] {
    return [this.store.pathOf('api-token'), this.store.pathOf('worker-key'), this.store.pathOf('hook-token')];
  }

  brainTokenPath(): string {
    return this.store.pathOf('brain-token');
  }

  /** The main brain's token, for a brain the service hosts itself (given in its environment). */
  brainToken(): string {
    return this.brain;
  }

  workerToken(sessionId: string): string {
    return `${WORKER_PREFIX}${sessionId}.${this.workerMac(sessionId)}`;
  }

  /**
   * An action link's credential: `bsa_<capability id>.<HMAC(action key, id)>`. It proves only that this service minted
   * the id; what the id may do, until when and how often, is the notifications' journal's to say.
   */
  actionToken(capabilityId: string): string {
    if (!CAPABILITY_ID.test(capabilityId)) throw new Error(`not a capability id: ${capabilityId}`);
    return `${ACTION_PREFIX}${capabilityId}.${this.mac(this.actionKey, capabilityId)}`;
  }

  /** The action principal an action link's capability proves, or null. It is accepted on the action route alone (auth.hook.ts). */
  authenticateAction(token: string): Principal | null {
    if (!token.startsWith(ACTION_PREFIX)) return null;
    const rest = token.slice(ACTION_PREFIX.length);
    const cut = rest.lastIndexOf('.');
    const id = rest.slice(0, Math.max(0, cut));
    if (!CAPABILITY_ID.test(id)) return null;
    return same(Buffer.from(rest.slice(cut + 1)), Buffer.from(this.mac(this.actionKey, id))) ? { kind: 'action', capability_id: id } : null;
  }

  /**
   * The principal a bearer token proves, or null. Comparisons are constant-time. A token shaped as a worker's is checked
   * as one alone when no other secret has that shape (the prefix is no secret): it spares a digest per request.
   */
  authenticate(token: string): Principal | null {
    const workerShaped = token.startsWith(WORKER_PREFIX);
    if (!workerShaped || this.workerShapedSecret) {
      const d = digest(token);
      if (same(d, this.userDigest)) return { kind: 'user' };
      if (same(d, this.brainDigest)) return { kind: 'main_brain' };
      if (this.hookDigest !== null && same(d, this.hookDigest)) return { kind: 'hook' };
    }
    if (!workerShaped) return null;
    const rest = token.slice(WORKER_PREFIX.length);
    // base64url never holds a dot, so the last one ends the session id.
    const cut = rest.lastIndexOf('.');
    if (cut <= 0) return null;
    const sessionId = rest.slice(0, cut);
    const given = Buffer.from(rest.slice(cut + 1));
    const kept = this.workerMacs.get(sessionId);
    if (kept !== undefined) return same(given, kept) ? { kind: 'worker', session_id: sessionId } : null;
    const expected = Buffer.from(this.workerMac(sessionId));
    if (!same(given, expected)) return null;
    if (this.workerMacs.size >= WORKER_MACS_KEPT) this.workerMacs.delete(this.workerMacs.keys().next().value as string);
    this.workerMacs.set(sessionId, expected);
    return { kind: 'worker', session_id: sessionId };
  }

  /**
   * A new token for the user, the main brain or the claude hooks; the old one stops working at once. A user token set
   * by BRAINSTEM_API_TOKEN is rotated by changing the variable, not here.
   */
  rotate(kind: 'user' | 'main_brain' | 'hook'): { token: string; path: string } {
    if (kind === 'hook') {
      const token = randomToken(HOOK_PREFIX);
      this.store.replace('hook-token', token);
      this.hookDigest = digest(token);
      this.workerShapedSecret = this.workerShapedSecret || token.startsWith(WORKER_PREFIX);
      return { token, path: this.store.pathOf('hook-token') };
    }
    if (kind === 'user') {
      if (this.options.configuredUserToken !== null) {
        throw new DomainError('conflict', 'the user token is set by BRAINSTEM_API_TOKEN: change the variable and restart to rotate it');
      }
      const token = randomToken(USER_PREFIX);
      this.store.replace('api-token', token);
      this.userDigest = digest(token);
      return { token, path: this.store.pathOf('api-token') };
    }
    const token = randomToken(BRAIN_PREFIX);
    this.store.replace('brain-token', token);
    this.brain = token;
    this.brainDigest = digest(token);
    return { token, path: this.store.pathOf('brain-token') };
  }

  private workerMac(sessionId: string): string {
    return this.mac(this.workerKey, sessionId);
  }

  private mac(key: Buffer, text: string): string {
    return createHmac('sha256', key).update(text).digest('base64url');
  }
}
