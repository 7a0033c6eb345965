import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import { dtoPlain, toPlain } from '../common/dto-plain';
import { inheritedKeyProblem } from '../common/inherited-key';
import { describeValidationErrors } from '../common/validation-errors';
import { parseProfileYaml } from './profile.yaml';
import { METADATA_FIELDS, ParseResult, ProfileDoc, ProfileDocument, normalizeDocument, parseProfileDocument } from './profile.schema';
import { BUILTIN_PROFILES } from './templates';

/** The document as class-transformer and class-validator alone parse it: what parseProfileDocument did before its one walk. */
function byClassValidator(raw: object): ParseResult {
  const inherited = inheritedKeyProblem(raw);
  if (inherited !== null) return { ok: false, errors: [inherited] };
  const instance = plainToInstance(ProfileDocument, raw);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) return { ok: false, errors: describeValidationErrors(errors) };
  const metadataKeys = METADATA_FIELDS.filter((k) => (raw as Record<string, unknown>)[k] !== undefined);
  return { ok: true, doc: normalizeDocument(toPlain(instance) as Partial<ProfileDoc> & { name: string }), metadataKeys };
}

/** A deep copy made in this realm: jest's structuredClone makes objects whose prototype is another realm's Object.prototype. */
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function prng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

/** Every field of every document class; a field set in one place is often valid in another. */
const FIELD_NAMES = [...new Set(getMetadataStorage().getTargetValidationMetadatas(ProfileDocument, '', false, false, undefined).map((m) => m.propertyName))];

const RICH = {
  version: 2,
  name: 'Rich',
  runtime: 'claude-code',
  description: 'every field',
  icon: 'star',
  model: { model: 'opus', provider: null, fallback: ['sonnet'], options: { temperature: 0.2, nested: { list: [1, 'a', null, { b: true }] }, 10: 'ten', 2: 'two' } },
  instructions: { system_prompt: 'Be brief.', files: ['AGENTS.md'], rules: [{ glob: 'src/**', instruction: 'typed' }] },
  tools: {
    builtin: ['Read', 'Edit'],
    mcp_servers: { github: { type: 'stdio', command: 'gh-mcp', args: ['--x'], env: { TOKEN: 'x' } }, 7: { type: 'http', url: 'https://x', command: null }, docs: { type: 'http', url: 'https://d' } },
    deny: ['Bash(rm:*)'],
  },
  permissions: { ask: ['Bash'], mode: 'plan', allow: ['Read'], deny: [] },
  skills: [{ name: 'lint', source: 'git', path: null, version: '1' }, { version: null, name: 'x.y' }],
  hooks: {
    PostToolUse: [{ type: 'command', command: 'echo', matcher: 'Edit', timeout: 5 }],
    SessionStart: [{ prompt: 'hi', type: 'prompt' }],
    PreToolUse: [{ type: 'http', url: 'https://h', timeout: 86_400 }],
  },
  auto_apply_dir: '/srv/app',
  default_cwd: '',
  loops: { repeated_call: 3, cooldown_s: 0, escalate_after: 2 },
  isolation: 'worktree',
  worktree: { copy: ['.env'], setup: 'npm ci' },
  budget: { per_day: { usd: 2.5 }, per_session: { tokens: 1000, usd: 0.5 } },
  sandbox: { network: { deny: ['*:22'], allow: ['x.example.com:443', '[::1]'] }, auto_allow_bash: false, allow_write: ['~/.npm'], deny_read: ['.env'] },
  created_at: '2026-01-01T00:00:00Z',
  locked: true,
  scope: { any: 'thing' },
};

const POOL: unknown[] = [
  'x', '', ' ', 'a\0b', '/abs', 'rel/dir', '../up', 'x'.repeat(5000), 'claude-code', 'auto', 'worktree', 'plan', 'stdio', 'http', 'command',
  0, 1, -1, 1.5, 60, 86_401, 1e300, true, false, null, [], ['a'], [1], ['a', 2], {}, { a: 1 }, { type: 'stdio' }, { type: 'command', command: 'x' },
  { name: 'skill' }, { glob: '*', instruction: 'i' }, [{ type: 'prompt' }], { tokens: 5 }, { repeated_call: 2 },
  '*', 'x.example.com', ['*.com'], ['~/x', 'a*'], { allow: ['a.example.com'], deny: ['*'] },
];
const KEYS = [...FIELD_NAMES, 'extra', 'size', 'get', '0', '10', 'SessionStart', 'per_day', 'tokens', 'type', 'glob', 'name'];

/** A copy of the document with one to three random changes: a value replaced or removed, a key added, anywhere in it. */
function mutate(base: object, random: () => number): Record<string, unknown> {
  const doc = clone(base) as Record<string, unknown>;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
    let at: Record<string, unknown> | unknown[] = doc;
    for (;;) {
      const keys = Object.keys(at);
      const children = keys.filter((k) => typeof (at as Record<string, unknown>)[k] === 'object' && (at as Record<string, unknown>)[k] !== null);
      if (children.length === 0 || random() < 0.35) break;
      at = (at as Record<string, unknown>)[pick(children)] as Record<string, unknown>;
    }
    const keys = Object.keys(at);
    const roll = random();
    if (Array.isArray(at)) {
      if (roll < 0.5 && at.length > 0) at[Math.floor(random() * at.length)] = clone(pick(POOL));
      else at.push(clone(pick(POOL)));
    } else if (roll < 0.4 && keys.length > 0) at[pick(keys)] = clone(pick(POOL));
    else if (roll < 0.6 && keys.length > 0) delete at[pick(keys)];
    else at[pick(KEYS)] = clone(pick(POOL));
  }
  return doc;
}

/** The same data with the keys of every object in a random order (the order class-transformer and the walk must keep). */
function shuffled(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, random));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([k, v]) => [k, shuffled(v, random)] as const);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j], entries[i]];
  }
  return Object.fromEntries(entries);
}

/** A document of fields taken from the bases at random: valid more often than a random change is. */
function mixed(bases: readonly object[], random: () => number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const base of bases) for (const [k, v] of Object.entries(base)) if (random() < 1 / bases.length) out[k] = clone(v);
  return out;
}

const same = (raw: object): void => {
  const expected = byClassValidator(clone(raw));
  const actual = parseProfileDocument(clone(raw));
  expect([raw, actual]).toEqual([raw, expected]);
  // toEqual ignores key order; the order is what a document is written to disk in.
  expect([raw, JSON.stringify(actual)]).toEqual([raw, JSON.stringify(expected)]);
};

describe('a profile document parsed by its one walk', () => {
  const walk = dtoPlain(ProfileDocument);
  const fixture = parseProfileYaml(readFileSync(join(__dirname, '../../test/fixtures/scan/billing-service/profile.yaml'), 'utf8'));
  const bases: object[] = [...BUILTIN_PROFILES.map((t) => t.doc), RICH, fixture.ok ? (fixture.value as object) : {}];

  it('given the profile schema, then every class it nests compiles to the walk', () => {
    expect(walk).not.toBeNull();
    expect(fixture.ok).toBe(true);
  });

  it('given the built-ins, a hand-written fixture and a document setting every field, when parsed, then the walk vouches for each and the result is the one class-validator gives, key order included', () => {
    for (const base of bases) {
      expect((walk as NonNullable<typeof walk>)(clone(base) as object)).not.toBeNull();
      same(base);
    }
  });

  it('given 6,000 documents changed at random (valid and not), when parsed, then each is accepted or refused exactly as by class-validator, with the same errors or the same document', () => {
    const random = prng(20261126);
    let accepted = 0;
    let refused = 0;
    let vouched = 0;
    for (let i = 0; i < 6000; i++) {
      const start = random() < 0.3 ? mixed(bases, random) : bases[i % bases.length];
      const changed = random() < 0.3 ? clone(start) : mutate(start, random);
      const raw = (random() < 0.5 ? shuffled(changed, random) : changed) as Record<string, unknown>;
      same(raw);
      if (byClassValidator(clone(raw)).ok) accepted++;
      else refused++;
      if ((walk as NonNullable<typeof walk>)(clone(raw)) !== null) vouched++;
    }
    expect(accepted).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
    // Nearly every accepted document takes the walk; the rest (a Map key named `size`, say) go the long way.
    expect(vouched).toBeGreaterThan(accepted * 0.9);
    expect(vouched).toBeLessThanOrEqual(accepted);
  });

  it('given a server named like a member of Map, when parsed, then it is left to class-transformer (which drops it) and both agree', () => {
    const raw = { name: 'M', tools: { mcp_servers: { size: { type: 'stdio' }, ok: { type: 'http' } } } };
    expect((walk as NonNullable<typeof walk>)(raw)).toBeNull();
    same(raw);
  });
});
