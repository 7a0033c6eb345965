import { isIP } from 'node:net';

/**
 * Hosts and host rules of a sandboxed worker's network, pure. The rules are srt's grammar (@anthropic-ai/sandbox-runtime,
 * domain-pattern.js): `example.com` matches that host, `*.example.com` its strict subdomains (never an IP literal), `*`
 * every host (a deny's), each with an optional `:port` (`[::1]:443` for IPv6) that restricts the rule to that port.
 * Matched with string operations only: a rule is the user's text, never compiled into a pattern.
 */

/** The permission request's tool for a connection no rule decides (docs/guide/sessions.md#network-access). */
export const NETWORK_TOOL = 'Network';

export const MAX_HOST_LENGTH = 253;

/** A hostname's labels: letters, digits, `-` and `_` (srt passes what DNS names carry), dots between. */
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** Why `host` is not a host a worker may be asked about, or null: a hostname, an IPv4 address or a bracketless IPv6 one. */
export function hostProblem(host: string): string | null {
  if (host.length === 0) return 'must not be empty';
  if (host.length > MAX_HOST_LENGTH) return `must be at most ${MAX_HOST_LENGTH} characters`;
  // Control characters first: a NUL would pass a suffix match and cut the name short where it is resolved.
  if (/[\u0000-\u001f\u007f]/.test(host)) return 'must not contain control characters';
  if (isIP(host) !== 0 || HOSTNAME.test(host)) return null;
  return 'must be a hostname, an IPv4 address or an IPv6 address without brackets';
}

/** A rule split into its host pattern and its port, if it names one (srt's splitDomainPatternPort, without canonicalising). */
function splitRule(rule: string): { host: string; port: number | undefined } {
  if (rule.startsWith('[')) {
    const close = rule.indexOf(']');
    if (close === -1) return { host: rule, port: undefined };
    const rest = rule.slice(close + 1);
    const port = rest === '' ? undefined : portOf(rest.startsWith(':') ? rest.slice(1) : '');
    return rest !== '' && port === undefined ? { host: rule, port: undefined } : { host: rule.slice(1, close), port };
  }
  const last = rule.lastIndexOf(':');
  // Two colons or more: an IPv6 literal without brackets, never split.
  if (last === -1 || rule.indexOf(':') !== last) return { host: rule, port: undefined };
  const port = portOf(rule.slice(last + 1));
  return port === undefined ? { host: rule, port: undefined } : { host: rule.slice(0, last), port };
}

/** 1–65535 written without leading zeros, else undefined. */
function portOf(text: string): number | undefined {
  if (text.length === 0 || text.length > 5 || text.startsWith('0')) return undefined;
  for (const ch of text) if (ch < '0' || ch > '9') return undefined;
  const port = Number(text);
  return port <= 65535 ? port : undefined;
}

/** Whether `rule` decides a connection to host:port. */
export function ruleMatches(rule: string, host: string, port: number): boolean {
  const split = splitRule(rule.trim());
  if (split.port !== undefined && split.port !== port) return false;
  const h = host.toLowerCase().replace(/\.$/, '');
  const pattern = split.host.toLowerCase();
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return isIP(h) === 0 && h.endsWith(pattern.slice(1));
  return h === pattern.replace(/\.$/, '');
}

/** The first of `rules` that decides host:port, or null. */
export function matchingRule(rules: readonly string[], host: string, port: number): string | null {
  return rules.find((r) => ruleMatches(r, host, port)) ?? null;
}

/** host:port as a rule names it (`[::1]:443` for IPv6): what a user's allow for this session remembers. */
export function hostRule(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host.toLowerCase()}:${port}`;
}

/** A host as a profile's allow names it, every port (`[::1]` for IPv6): what a user's allow with scope `profile` adds. */
export function profileHostRule(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host.toLowerCase();
}
