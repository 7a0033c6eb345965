import 'reflect-metadata';
import { isIP } from 'node:net';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, ValidateBy, ValidateNested, ValidationOptions } from 'class-validator';

/** How many entries each list of the section may hold, and how long one may be. */
export const SANDBOX_LIST_MAX = 100;
export const SANDBOX_PATH_MAX = 4096;
/** A DNS name (253) with a wildcard and a port; an IPv6 literal in brackets with a port is shorter. */
export const SANDBOX_HOST_MAX = 262;

/** srt reads these as a glob pattern (and each platform differently): the profile names folders and files only. */
const GLOB_CHARS = ['*', '?', '[', ']', '{', '}'];
const CONTROL = /[\u0000-\u001f\u007f]/;
/** One label of a host name as a proxy sees it (ASCII; an IDN arrives as punycode): letters, digits, `-`, `_`. */
const LABEL = /^[A-Za-z0-9_-]+$/;
const PORT = /^[1-9][0-9]{0,4}$/;

/**
 * Why a path of `allow_write` or `deny_read` cannot be used, or null. Absolute, `~` or `~/…` (from home), or relative
 * (to the session's cwd); never `~user`, a glob, `\`, NUL or another control character. Pure.
 */
export function sandboxPathProblem(path: string): string | null {
  if (path === '') return 'must not be empty';
  if (path.length > SANDBOX_PATH_MAX) return `must be at most ${SANDBOX_PATH_MAX} characters`;
  if (path.includes('\0')) return 'must not contain NUL';
  if (CONTROL.test(path)) return 'must not contain control characters';
  if (path.startsWith('~') && path !== '~' && !path.startsWith('~/')) return 'must start with ~/ to name a path in your home (not ~user)';
  if (path.includes('\\')) return 'must use / between its parts';
  if (GLOB_CHARS.some((c) => path.includes(c))) return 'must name a folder or file, not a pattern (no * ? [ ] { })';
  return null;
}

/**
 * Why an entry of `network.allow` (or `network.deny`) cannot be used, or null: srt's domain grammar, checked as srt
 * 0.0.83 checks it (domain-pattern.js) so that nothing srt would refuse reaches a session, and a little stricter.
 * - `example.com`, `*.example.com` (at least two labels after `*.`), `localhost`, an IPv4 literal, `[IPv6]`;
 * - an optional `:port`, 1–65535, without leading zeros;
 * - `*` alone (every host), with or without a port, in `deny` only.
 * Stricter than srt: labels are ASCII letters, digits, `-` and `_` (srt takes any character but `/` and `:`, which no
 * host a proxy is asked for matches), and an IPv6 literal has no zone id. Fixed code: the entry is never a pattern. Pure.
 */
export function networkEntryProblem(entry: string, list: 'allow' | 'deny'): string | null {
  if (entry === '') return 'must not be empty';
  if (entry.length > SANDBOX_HOST_MAX) return `must be at most ${SANDBOX_HOST_MAX} characters`;
  if (CONTROL.test(entry)) return 'must not contain control characters';
  if (entry.includes('://') || entry.includes('/')) return 'must be a host, not a URL (no scheme, no path)';
  const split = splitPort(entry);
  if (split === null) return 'has a port that is not a number from 1 to 65535';
  const host = split.host;
  if (entry.startsWith('[')) {
    return host.startsWith('[') && host.endsWith(']') && !host.includes('%') && isIP(host.slice(1, -1)) === 6 ? null : 'must hold an IPv6 address between [ and ] (no zone id)';
  }
  if (host.includes(':')) return 'must put an IPv6 address between [ and ] (as [::1] or [::1]:443)';
  if (host === '*') return list === 'deny' ? null : 'may not be * (every host): name the hosts to allow';
  if (host === 'localhost') return null;
  const wildcard = host.startsWith('*.');
  const name = wildcard ? host.slice(2) : host;
  if (name.includes('*')) return 'may use * only as a first label, as in *.example.com';
  const labels = name.split('.');
  if (labels.length < 2) return wildcard ? 'is too broad: *. must be followed by at least two labels, as in *.example.com' : 'must be a domain with a dot (example.com), localhost or an IP address';
  if (labels.some((l) => l === '')) return 'must not have an empty label (a leading, trailing or double dot)';
  if (!labels.every((l) => LABEL.test(l))) return 'must hold only letters, digits, "-", "_" and "." (an international name in its xn-- form)';
  return null;
}

/** The host and port of an entry as srt splits them: a port only when the suffix is one; null when it cannot be. */
function splitPort(entry: string): { host: string; port: number | undefined } | null {
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close === -1) return { host: entry, port: undefined };
    const rest = entry.slice(close + 1);
    if (rest === '') return { host: entry, port: undefined };
    const port = rest.startsWith(':') ? portOf(rest.slice(1)) : undefined;
    return port === undefined ? null : { host: entry.slice(0, close + 1), port };
  }
  const first = entry.indexOf(':');
  // Two colons or more, unbracketed: an IPv6 address, which srt refuses unbracketed (the caller says so).
  if (first === -1 || entry.indexOf(':', first + 1) !== -1) return { host: entry, port: undefined };
  const port = portOf(entry.slice(first + 1));
  return port === undefined ? null : { host: entry.slice(0, first), port };
}

function portOf(text: string): number | undefined {
  if (!PORT.test(text)) return undefined;
  const port = Number(text);
  return port > 65535 ? undefined : port;
}

function listRule(name: string, problem: (value: string) => string | null, what: string, options?: ValidationOptions): PropertyDecorator {
  const bad = (v: unknown): unknown => (Array.isArray(v) ? v.find((x: unknown) => typeof x !== 'string' || problem(x) !== null) : undefined);
  return ValidateBy(
    {
      name,
      validator: {
        validate: (v: unknown) => Array.isArray(v) && v.every((x: unknown) => typeof x === 'string' && problem(x) === null),
        defaultMessage: (args) => {
          const b = bad(args?.value);
          // The entry is quoted by JSON.stringify, so a control character in it cannot break the message.
          return typeof b === 'string' ? `$property: ${JSON.stringify(b.slice(0, 200))} ${problem(b)}` : `$property must be a list of ${what}`;
        },
      },
    },
    options,
  );
}

const IsSandboxPaths = () => listRule('isSandboxPaths', sandboxPathProblem, 'paths');
const IsNetworkEntries = (list: 'allow' | 'deny') => listRule(`isNetwork${list === 'allow' ? 'Allow' : 'Deny'}Entries`, (e) => networkEntryProblem(e, list), 'hosts');

/** Hosts a sandboxed worker may reach without asking, and hosts it never reaches (deny wins). */
export class SandboxNetworkConfig {
  @IsOptional() @IsArray() @ArrayMaxSize(SANDBOX_LIST_MAX) @IsNetworkEntries('allow')
  allow?: string[];

  @IsOptional() @IsArray() @ArrayMaxSize(SANDBOX_LIST_MAX) @IsNetworkEntries('deny')
  deny?: string[];
}

/**
 * What a sandboxed worker of this profile may do beyond the defaults (docs/reference/profile-schema.md#sandbox): more
 * folders to write, more paths hidden, hosts allowed or denied, and whether Bash runs without asking inside it.
 */
export class SandboxConfig {
  @IsOptional() @IsArray() @ArrayMaxSize(SANDBOX_LIST_MAX) @IsSandboxPaths()
  allow_write?: string[];

  @IsOptional() @IsArray() @ArrayMaxSize(SANDBOX_LIST_MAX) @IsSandboxPaths()
  deny_read?: string[];

  @IsOptional() @ValidateNested() @Type(() => SandboxNetworkConfig)
  network?: SandboxNetworkConfig;

  @IsOptional() @IsBoolean()
  auto_allow_bash?: boolean;
}
