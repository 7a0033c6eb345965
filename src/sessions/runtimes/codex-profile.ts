import { parse } from 'smol-toml';
import { EmittedFile } from '../../profiles/emitters';
import { isPlainObject } from '../../profiles/merge-patch';
import { instructionsMarkdown } from '../../profiles/emitters/emitter-support';
import { ProfileDoc } from '../../profiles/profile.schema';

export const CODEX_CONFIG_FILE = '.codex/config.toml';

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * How a profile reaches a codex session without touching the user's repo: the emitted `.codex/config.toml`
 * becomes `-c key=value` overrides (codex parses each value as TOML), and the instructions the emitter would put
 * in AGENTS.md go in as `developer_instructions`. Pure.
 *
 * Tables are flattened to dotted keys, so an override sets one leaf and leaves the rest of the user's table
 * (`mcp_servers`, say) as it is. A table whose keys cannot be dotted (codex splits the path on `.`) is passed
 * whole, as an inline table.
 */
export function codexSessionArgs(profile: ProfileDoc, emitted: readonly EmittedFile[]): string[] {
  const args: string[] = [];
  const config = emitted.find((f) => f.path === CODEX_CONFIG_FILE);
  if (config) for (const [key, value] of flatten(parse(config.content), '')) args.push('-c', `${key}=${value}`);
  const instructions = instructionsMarkdown(profile);
  if (instructions) args.push('-c', `developer_instructions=${tomlValue(instructions)}`);
  return args;
}

function flatten(table: Record<string, unknown>, prefix: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(table)) {
    const path = prefix + key;
    if (isTable(value) && Object.keys(value).length > 0 && Object.keys(value).every((k) => BARE_KEY.test(k))) {
      out.push(...flatten(value, `${path}.`));
    } else if (!isTable(value) || Object.keys(value).length > 0) {
      // An empty table would replace the user's whole table with nothing.
      out.push([path, tomlValue(value)]);
    }
  }
  return out;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && !(value instanceof Date);
}

/** A TOML value on one line: JSON's string escapes are TOML's, and tables go inline. */
function tomlValue(value: unknown): string {
  // TOML also wants DEL escaped, which JSON leaves alone.
  if (typeof value === 'string') return JSON.stringify(value).replace(/\x7f/g, '\\u007f');
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(', ')}]`;
  if (isTable(value)) return `{${Object.entries(value).map(([k, v]) => `${BARE_KEY.test(k) ? k : JSON.stringify(k)} = ${tomlValue(v)}`).join(', ')}}`;
  throw new Error(`codex config value ${String(value)} has no one-line TOML form`);
}
