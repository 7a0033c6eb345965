import { splitHostPort } from '../common/host-port';

/**
 * Which Host and Origin values a request may carry (DNS-rebinding and cross-site defence). Pure: the listening
 * port and the configured names are inputs.
 */
export interface HostPolicy {
  /** Lower-case host names without port: the bind address, the loopback names, and BRAINSTEM_ALLOWED_HOSTS. */
  names: ReadonlySet<string>;
  /** Entries of BRAINSTEM_ALLOWED_HOSTS that name a port ("example.test:8443"), lower-case. */
  hostPorts: ReadonlySet<string>;
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
/** Binding every interface names no host a client could send. */
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export function hostPolicy(bindHost: string, allowedHosts: readonly string[]): HostPolicy {
  const names = new Set(LOOPBACK);
  const hostPorts = new Set<string>();
  if (!WILDCARD.has(bindHost)) names.add(bracketed(bindHost.toLowerCase()));
  for (const raw of allowedHosts) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    const split = splitHostPort(entry);
    if (split?.port !== undefined) hostPorts.add(entry);
    else names.add(bracketed(entry));
  }
  return { names, hostPorts };
}

/**
 * A Host header is allowed when its name is allowed and its port is the one we listen on (or it lists a
 * host:port entry). `port` is null when unknown (an in-process request): then the name alone decides.
 */
export function hostAllowed(policy: HostPolicy, host: string | undefined, port: number | null): boolean {
  if (!host) return false;
  const value = host.toLowerCase();
  const split = splitHostPort(value);
  if (!split) return false;
  if (policy.hostPorts.has(value)) return true;
  // A proxy on its scheme's default port (TLS on 443) passes on the browser's Host, which leaves that port out.
  if (split.port === undefined && defaultPortEntry(policy, split.name)) return true;
  if (!policy.names.has(split.name)) return false;
  if (port === null) return true;
  // A client leaves out the scheme's default port.
  return split.port === undefined ? port === 80 : Number(split.port) === port;
}

function defaultPortEntry(policy: HostPolicy, name: string): boolean {
  return policy.hostPorts.has(`${name}:443`) || policy.hostPorts.has(`${name}:80`);
}

/** A browser's Origin must be an http(s) origin on an allowed host; "null" and anything else is refused. */
export function originAllowed(policy: HostPolicy, origin: string, port: number | null): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.toLowerCase()) return false;
  const explicit = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  const host = `${url.hostname}:${explicit}`;
  // We serve plain HTTP: an https origin can only be a TLS proxy listed as host:port.
  return url.protocol === 'https:' ? policy.hostPorts.has(host) : hostAllowed(policy, host, port);
}

/** Host header values for the listening port, for the MCP SDK's own DNS-rebinding check. */
export function allowedHostValues(policy: HostPolicy, port: number): string[] {
  const portless = [...policy.hostPorts].flatMap((h) => {
    const { name, port: p } = splitHostPort(h) as { name: string; port: string };
    return p === '443' || p === '80' ? [name] : [];
  });
  return [...new Set([...[...policy.names].map((n) => `${n}:${port}`), ...(port === 80 ? policy.names : []), ...policy.hostPorts, ...portless])];
}

/** The Origin values originAllowed accepts for the listening port, for the same SDK check. */
export function allowedOriginValues(policy: HostPolicy, port: number): string[] {
  const direct = [...[...policy.names].map((n) => `http://${n}:${port}`), ...(port === 80 ? [...policy.names].map((n) => `http://${n}`) : [])];
  const proxied = [...policy.hostPorts].flatMap((h) => {
    const { name, port: p } = splitHostPort(h) as { name: string; port: string };
    // Browsers leave the scheme's default port out of an Origin.
    return [p === '80' ? `http://${name}` : `http://${h}`, p === '443' ? `https://${name}` : `https://${h}`];
  });
  return [...direct, ...proxied];
}
