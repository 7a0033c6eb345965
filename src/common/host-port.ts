/**
 * A Host header value or a BRAINSTEM_ALLOWED_HOSTS entry: "name:port", "[v6]:port", "name", "[v6]"; null when malformed.
 * Ports are kept as written digits. The config loader and the host policy both read hosts this way.
 */
export function splitHostPort(value: string): { name: string; port?: string } | null {
  let name: string;
  let rest: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    name = value.slice(0, end + 1);
    rest = value.slice(end + 1);
  } else {
    const colon = value.indexOf(':');
    if (colon >= 0 && value.indexOf(':', colon + 1) >= 0) return { name: `[${value}]` }; // a bare IPv6 address
    name = colon < 0 ? value : value.slice(0, colon);
    rest = colon < 0 ? '' : value.slice(colon);
  }
  if (!name) return null;
  if (rest === '') return { name };
  const port = rest.slice(1);
  if (!rest.startsWith(':') || port === '' || port.length > 5 || [...port].some((c) => c < '0' || c > '9')) return null;
  return { name, port };
}
