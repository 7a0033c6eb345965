import { isIP } from 'node:net';
import { DomainError } from '../common/domain-error';
import { SANDBOX_LIST_MAX, networkEntryProblem } from './profile-sandbox.schema';
import { ProfileDoc, ProfileSandboxSection } from './profile.schema';

/** A profile's `sandbox` section with its defaults (docs/reference/profile-schema.md#sandbox). */
export interface ProfileSandbox {
  /** Writable beyond the defaults: absolute, `~/…` or relative to the session's cwd, as written. */
  allow_write: string[];
  /** Hidden beyond the defaults, in the same forms. */
  deny_read: string[];
  /** srt's domain grammar; deny always wins over allow. */
  network: { allow: string[]; deny: string[] };
  /** Inside a sandbox, Bash runs without asking when no deny or ask rule matches it; never outside one. */
  auto_allow_bash: boolean;
}

/** The section of a document (only the `sandbox` key is read), every field given: empty lists, auto_allow_bash on. Pure. */
export function profileSandbox(doc: Pick<ProfileDoc, 'sandbox'>): ProfileSandbox {
  const s: ProfileSandboxSection = doc.sandbox ?? {};
  return {
    allow_write: [...(s.allow_write ?? [])],
    deny_read: [...(s.deny_read ?? [])],
    network: { allow: [...(s.network?.allow ?? [])], deny: [...(s.network?.deny ?? [])] },
    auto_allow_bash: s.auto_allow_bash ?? true,
  };
}

/** Whether two entries name the same hosts and port: srt matches host names without regard to case. */
const sameEntry = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * The document with `host` added to `sandbox.network.allow` ("add to profile" when the user allows a host a session
 * asked for), or the same document when the list holds it already. `host` is an entry of srt's grammar (`example.com`,
 * `example.com:443`); a bare IPv6 address is put between brackets. Anything else, or a full list, is `invalid_input`.
 * The rest of the section is kept as written. Pure: the caller saves the result (journaled, as any profile change).
 */
export function withNetworkAllow<D extends Pick<ProfileDoc, 'sandbox'>>(doc: D, host: string): D {
  const entry = isIP(host) === 6 ? `[${host}]` : host;
  const problem = networkEntryProblem(entry, 'allow');
  if (problem !== null) throw new DomainError('invalid_input', `sandbox.network.allow: ${JSON.stringify(entry.slice(0, 200))} ${problem}`);
  const section = doc.sandbox ?? {};
  const allow = section.network?.allow ?? [];
  if (allow.some((a) => sameEntry(a, entry))) return doc;
  if (allow.length >= SANDBOX_LIST_MAX) throw new DomainError('invalid_input', `sandbox.network.allow holds ${SANDBOX_LIST_MAX} hosts already, the most it may`);
  return { ...doc, sandbox: { ...section, network: { ...section.network, allow: [...allow, entry] } } };
}

/**
 * What a change to a profile's sandbox widens: a path made writable, a path no longer hidden, a host allowed or no
 * longer denied, Bash let run without asking. Those are the user's to allow, never the main brain's; narrowing widens
 * nothing. A path or host one of `known` allows already (the built-in templates, which any session may use) is no
 * widening either. Paths are compared as written, hosts without regard to case. Pure.
 */
export function sandboxLoosened(
  before: Pick<ProfileDoc, 'sandbox'> | undefined,
  after: Pick<ProfileDoc, 'sandbox'>,
  known: readonly Pick<ProfileDoc, 'sandbox'>[] = [],
): string[] {
  const was = profileSandbox(before ?? {});
  const now = profileSandbox(after);
  const granted = [was, ...known.map(profileSandbox)];
  const samePath = (a: string, b: string) => a === b;
  const added = (from: readonly string[], to: readonly string[], same: (a: string, b: string) => boolean) => to.filter((x) => !from.some((y) => same(x, y)));
  const out: string[] = [];
  for (const p of added(granted.flatMap((g) => g.allow_write), now.allow_write, samePath)) out.push(`profile.sandbox.allow_write: let workers write ${JSON.stringify(p)}`);
  for (const p of added(now.deny_read, was.deny_read, samePath)) out.push(`profile.sandbox.deny_read: no longer hide ${JSON.stringify(p)}`);
  for (const h of added(granted.flatMap((g) => g.network.allow), now.network.allow, sameEntry)) out.push(`profile.sandbox.network.allow: allow ${JSON.stringify(h)}`);
  for (const h of added(now.network.deny, was.network.deny, sameEntry)) out.push(`profile.sandbox.network.deny: no longer deny ${JSON.stringify(h)}`);
  // A profile without the section had Bash auto-allowed already (the default), so only a change from false widens.
  if (!was.auto_allow_bash && now.auto_allow_bash) out.push('profile.sandbox.auto_allow_bash: let Bash run without asking in the sandbox');
  return out;
}
