import { FieldHint, RouteFields } from './route-list';
import { SeededRandom } from './seeded-random';

/** One generated HTTP request, as Fastify's inject takes it. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

export interface FuzzSettings {
  /**
   * The only absolute paths the generator writes (the test's temp directories and a missing one): every other
   * string it makes or replays that starts with `/` or `~` is made relative, so a fuzzed directory field cannot
   * point the service at a real directory on the machine.
   */
  paths: readonly string[];
  /** Where `paths` live: replayed strings under it are kept as they are. */
  root: string;
  /** Values for any key named `command`, the one field that names a program the service runs; the first one most often. */
  commands: readonly string[];
  bodyLimit: number;
}

/** Regex metacharacters, alone and in patterns that break or blow up a RegExp built from them. */
const REGEX_TEXT = ['(', ')', '[', ']', '{', '}', '*', '+', '?', '\\', '$', '^', '|', '.', 'c++', '(?<x>', '[^', 'a{1,', '\\1', '(a+)+$', '$&', '$1', '*?', '[z-a]'];
const PROTO_TEXT = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const NUMBER_TEXT = ['0', '-0', '1e309', '-1e309', 'NaN', 'Infinity', '-Infinity', '0x1f', '1_000', '1e-400', '9'.repeat(400), '-1', '1.5', ' 1'];
const UNICODE_TEXT = ['\u0000', 'a\u0000b', '\u0007\u001b[31m', '\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '\u202eevil', '\u200f\u0627\u0644\u0639\u0631\u0628\u064a\u0629', '\u05e9\u05dc\u05d5\u05dd', '\ufeff', '\uffff', '\ufffe', '\u{1F4A5}', 'e\u0301', '\u0130', '\u2028\u2029', '\u200b'];
const PATH_TEXT = ['..', '../..', '../../../../etc/passwd', '..\\..\\x', '%2e%2e', '%00', '%ZZ', './x', 'a/b', '.', '~', 'CON', 'nul'];
const MISC_TEXT = ['', ' ', '\t\n', 'x', 'true', 'false', 'null', '{}', '[]', '<script>alert(1)</script>', "' OR 1=1 --", '$(true)', '`true`', '%s%n', '{{x}}', '${x}'];
/** Strings worth trying in any field, besides random ones. */
const INTERESTING_TEXT = [...REGEX_TEXT, ...PROTO_TEXT, ...NUMBER_TEXT, ...UNICODE_TEXT, ...PATH_TEXT, ...MISC_TEXT];

/** JSON number literals as written: JSON.stringify cannot write -0, 1e309 or a 30-digit integer. */
const NUMBER_LITERALS = ['0', '-0', '1', '-1', '1.5', '2147483648', '-2147483649', '9007199254740993', '1e308', '-1e308', '1e309', '-1e309', '5e-324', '1e-400', '1E+2', '0.0000001', '123456789012345678901234567890', '1.0', '600001'];

/** Bodies that are not JSON, or not quite: each answered 400 by the parser, never 5xx. */
const BROKEN_JSON = ['{', '}', '{"a":', '{"a" 1}', '[1,2', "{'a':1}", '{"a":1,}', '{"a":NaN}', '{"a":Infinity}', '{"a":undefined}', '{a:1}', '// x\n{}', '\ufeff{}', '{"a":"\\u12"}', '{"a":"\\x41"}', '"unterminated', '{"a":1}garbage', '{"a":1}{"b":2}', 'nul', ' ', '{"a":01}', '{"a":-}', '{"a":"\u0000"}'];

/** Content types the routes do not take, or take with an odd twist. */
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/yaml',
  'text/yaml',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/JSON',
  'application/json;;;',
  'application/vnd.api+json',
  'application/octet-stream',
  'x',
  '*/*',
  '',
];

const MCP_METHODS = ['initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list', 'prompts/list', 'prompts/get', 'completion/complete', 'logging/setLevel', 'notifications/initialized', 'notifications/cancelled'];

/** Path parameter text written into the URL as is: traversal, NUL, bad escapes, bad UTF-8, very long. */
const RAW_PARAMS = ['..', '.', '%2e%2e', '%2E%2E%2F%2E%2E', '..%2F..%2Fetc%2Fpasswd', '%2F', '%00', 'a%00b', '%ZZ', '%', '%C0%AF', '%ED%A0%80', '%FF%FE', '%E2%80%AE', '+', '%20', '__proto__', 'constructor', 'prototype', 'x'.repeat(100), 'x'.repeat(101), 'x'.repeat(5_000), 'a;b', 'a,b', '*', '(', '%5B', '%5C'];

/** Query text written as is. */
const RAW_QUERIES = ['a[b]=1', 'a[]=1&a[]=2', '=', '&&&', '%ZZ=1', 'a=%ZZ', '__proto__=1', '__proto__[x]=1', 'constructor[prototype][x]=1', 'toString=1', `a=${'x'.repeat(5_000)}`, 'a=1&a=2', 'a', 'a==b', '%00=%00', ';;', 'a=%ED%A0%80'];

/** Words the generator uses as keys, values and ids, learnt from the app (its DTOs, tool schemas, answers). */
export class Vocabulary {
  private readonly lists = { keys: [] as string[], words: [] as string[], ids: [] as string[] };
  private readonly seen = { keys: new Set<string>(), words: new Set<string>(), ids: new Set<string>() };
  private readonly samples: string[] = [];

  constructor(private readonly root: string) {}

  get keys(): readonly string[] {
    return this.lists.keys;
  }
  get words(): readonly string[] {
    return this.lists.words;
  }
  get ids(): readonly string[] {
    return this.lists.ids;
  }
  /** JSON texts of objects the app answered with: bodies to mutate. */
  get objects(): readonly string[] {
    return this.samples;
  }

  add(kind: 'keys' | 'words' | 'ids', value: string): void {
    const cap = kind === 'ids' ? 300 : 600;
    if (value.length > 200 || this.seen[kind].has(value) || this.lists[kind].length >= cap) return;
    if (kind === 'ids' && (value.startsWith('/') || value.startsWith('~'))) return;
    this.seen[kind].add(value);
    this.lists[kind].push(value);
  }

  /**
   * Keys, enum-like words (lowercase, no digits: ids and timestamps stay out, so a seed replays the same words)
   * and ids of a JSON answer; small objects in it become bodies to mutate.
   */
  harvest(value: unknown): void {
    let budget = 3_000;
    const stack: Array<[unknown, string]> = [[value, '']];
    while (stack.length > 0 && budget-- > 0) {
      const [v, key] = stack.pop() as [unknown, string];
      if (typeof v === 'string') {
        if (/^[a-z][a-z_.:/-]{0,39}$/.test(v) && !v.includes('//')) this.add('words', v);
        if (key === 'id' || key.endsWith('_id') || key === 'alias') this.add('ids', v);
        continue;
      }
      if (v === null || typeof v !== 'object') continue;
      if (!Array.isArray(v)) {
        const text = JSON.stringify(v);
        if (text.length < 20_000 && this.samples.length < 120 && !this.samples.includes(text)) this.samples.push(text);
      }
      for (const [k, child] of Object.entries(v)) {
        if (!Array.isArray(v)) this.add('keys', k);
        stack.push([child, Array.isArray(v) ? key : k]);
      }
    }
  }

  /** Whether a replayed absolute path may stay as it is. */
  isOurs(path: string): boolean {
    return path.startsWith(`${this.root}/`);
  }
}

/**
 * Random requests from a seed: random keys (regex metacharacters, prototype names, unicode), values of every
 * JSON type at every depth, number literals JSON.stringify cannot write, deep nesting, strings near the body
 * limit, broken JSON, wrong content types, odd path parameters and query strings, JSON-RPC for /mcp, and the
 * app's own answers with one thing changed.
 */
export class FuzzInput {
  /** Values left for the body being made: wide arrays of wide objects would otherwise grow without bound. */
  private budget = 0;

  constructor(
    readonly random: SeededRandom,
    private readonly vocabulary: Vocabulary,
    private readonly settings: FuzzSettings,
  ) {}

  /** A request to a route; its fields (when known) make some bodies and queries look like what it takes. */
  request(method: string, route: string, fields: RouteFields = { body: [], query: [] }): FuzzRequest {
    const r = this.random;
    const headers: Record<string, string> = {};
    let payload: string | undefined;
    const takesBody = method === 'POST' || method === 'PATCH' || method === 'PUT';
    if (takesBody ? r.chance(0.93) : r.chance(0.12)) {
      const body = this.body(route, fields.body);
      payload = body.payload;
      if (body.contentType !== null) headers['content-type'] = body.contentType;
    }
    if (route === '/mcp' || r.chance(0.05)) headers.accept = r.chance(0.8) ? 'application/json, text/event-stream' : this.header(this.string());
    if (r.chance(0.06)) headers['x-brainstem-session'] = this.header(r.chance(0.5) && this.vocabulary.ids.length ? r.pick(this.vocabulary.ids) : this.string());
    if (r.chance(0.04)) headers['last-event-id'] = this.header(r.chance(0.5) ? r.pick(NUMBER_LITERALS) : this.string());
    if (r.chance(0.02)) headers['content-encoding'] = r.pick(['gzip', 'br', 'x']);
    return { method, url: this.url(route, fields.query), headers, ...(payload === undefined ? {} : { payload }) };
  }

  // ---- text ----

  string(): string {
    const r = this.random;
    return r.weighted<string>([
      [35, () => r.pick(INTERESTING_TEXT)],
      [40, () => this.relative(this.randomText())],
      [15, () => (this.vocabulary.words.length ? r.pick(this.vocabulary.words) : 'x')],
      [5, () => (this.vocabulary.ids.length ? r.pick(this.vocabulary.ids) : 'x')],
      [5, () => r.pick(this.settings.paths)],
    ]);
  }

  key(): string {
    const r = this.random;
    return r.weighted<string>([
      [55, () => (this.vocabulary.keys.length ? r.pick(this.vocabulary.keys) : 'name')],
      [12, () => r.pick(REGEX_TEXT)],
      [2, () => r.pick(PROTO_TEXT)],
      [7, () => r.pick([...UNICODE_TEXT, ...NUMBER_TEXT, '', ' ', 'a.b', 'a[0]', '$ref', 'x'.repeat(300)])],
      [25, () => this.randomText()],
    ]);
  }

  /** Characters from every class that tends to break text handling; a long text repeats a short one. */
  private randomText(): string {
    const r = this.random;
    const length = r.weighted<number>([
      [70, () => r.between(0, 12)],
      [22, () => r.between(13, 60)],
      [8, () => r.between(61, 3_000)],
    ]);
    let out = '';
    for (let i = 0; i < Math.min(length, 60); i++) {
      out += r.weighted<string>([
        [40, () => String.fromCharCode(r.between(0x20, 0x7e))],
        [12, () => r.pick(['(', ')', '[', ']', '{', '}', '*', '+', '?', '\\', '$', '^', '|', '.', '/', '%', '"', "'", '`', ':', ','])],
        [6, () => String.fromCharCode(r.between(0, 0x1f))],
        [8, () => String.fromCharCode(r.between(0xa0, 0x3ff))],
        [6, () => String.fromCharCode(r.between(0x590, 0x6ff))],
        [4, () => r.pick(['\u202e', '\u202d', '\u200f', '\u200e', '\u2066', '\u2069'])],
        [6, () => String.fromCharCode(r.between(0x4e00, 0x9fff))],
        [6, () => String.fromCharCode(r.between(0xd800, 0xdfff))],
        [6, () => String.fromCodePoint(r.between(0x10000, 0x10ffff))],
        [6, () => r.pick(['\u200b', '\ufeff', '\u00ad', '\u0301', '\u2028', '\ufffd', '\uffff'])],
      ]);
    }
    return length > 60 ? out.repeat(Math.ceil(length / Math.max(out.length, 1))).slice(0, length) : out;
  }

  /** A string that could name a directory, made relative unless it is one of the test's own paths. */
  private relative(text: string): string {
    return (text.startsWith('/') || text.startsWith('~')) && !this.vocabulary.isOurs(text) ? `.${text}` : text;
  }

  private header(text: string): string {
    // Header values are latin1 without control characters; anything else is refused by Node before the app sees it.
    return text.replace(/[^\x20-\x7e\xa0-\xff]/g, '?');
  }

  // ---- JSON ----

  /** A value as JSON text, `depth` levels deep at most; once a body has spent its budget of values, only scalars. */
  value(depth: number): string {
    const r = this.random;
    if (--this.budget <= 0) depth = 0;
    return r.weighted<string>([
      [40, () => JSON.stringify(this.string())],
      [16, () => r.pick(NUMBER_LITERALS)],
      [4, () => String(r.between(-1_000, 100_000))],
      [8, () => r.pick(['true', 'false', 'null'])],
      [depth > 0 ? 15 : 0, () => this.array(depth - 1)],
      [depth > 0 ? 17 : 0, () => this.object(depth - 1)],
    ]);
  }

  object(depth: number): string {
    const r = this.random;
    const size = r.chance(0.9) ? r.between(0, 6) : r.between(7, 60);
    const entries: string[] = [];
    for (let i = 0; i < size; i++) {
      const key = this.key();
      entries.push(`${JSON.stringify(key)}:${this.entryValue(key, () => this.value(depth))}`);
    }
    return `{${entries.join(',')}}`;
  }

  array(depth: number): string {
    const r = this.random;
    const size = r.chance(0.92) ? r.between(0, 5) : r.between(6, 400);
    return `[${Array.from({ length: size }, () => this.value(depth)).join(',')}]`;
  }

  /**
   * An object of the route's own fields, each there more often than not (and now and then another key), each with a
   * value of the type its validators ask for, an allowed word, or anything.
   */
  private shaped(fields: readonly FieldHint[]): string {
    const r = this.random;
    const entries: string[] = [];
    const isOptional = (f: FieldHint) => f.checks.includes('isOptional') || f.checks.includes('conditionalValidation');
    const optional = fields.filter(isOptional).length;
    for (const field of fields) {
      // Required fields mostly there, about three optional ones (the more fields, the less likely all are right), and
      // directories and commands often, since a session needs both to start.
      const often = /dir|cwd|command/.test(field.key);
      if (!r.chance(!isOptional(field) ? 0.9 : often ? 0.7 : Math.min(0.5, 3 / optional))) continue;
      entries.push(`${JSON.stringify(field.key)}:${this.entryValue(field.key, () => this.fieldValue(field))}`);
    }
    if (r.chance(0.1)) {
      const key = this.key();
      entries.splice(r.int(entries.length + 1), 0, `${JSON.stringify(key)}:${this.entryValue(key, () => this.value(2))}`);
    }
    return `{${entries.join(',')}}`;
  }

  private fieldValue(field: FieldHint): string {
    const r = this.random;
    // Directory fields take absolute paths, and the only ones the generator writes are the test's own.
    const isDir = /dir|cwd/.test(field.key);
    return r.weighted<string>([
      [field.words.length ? 45 : 0, () => JSON.stringify(r.pick(field.words))],
      [isDir ? 70 : 0, () => JSON.stringify(r.pick(this.settings.paths))],
      [45, () => this.typed(field.checks)],
      [8, () => JSON.stringify(this.string())],
      [8, () => this.value(2)],
    ]);
  }

  /** A plain value of the type the validators name. */
  private typed(checks: readonly string[]): string {
    const r = this.random;
    if (checks.includes('isBoolean')) return r.pick(['true', 'false']);
    if (checks.includes('isInt') || checks.includes('isNumber')) return String(r.between(0, r.pick([3, 100, 10_000])));
    if (checks.includes('isArray')) return `[${Array.from({ length: r.between(0, 2) }, () => JSON.stringify(this.plain())).join(',')}]`;
    if (checks.includes('isObject') || checks.includes('nestedValidation')) return r.chance(0.8) ? '{}' : this.object(1);
    return JSON.stringify(this.plain());
  }

  /** Text most fields take: a word the app uses or a few letters and digits. */
  private plain(): string {
    const r = this.random;
    if (this.vocabulary.words.length && r.chance(0.5)) return r.pick(this.vocabulary.words);
    const chars = 'abcdefghijklmnopqrstuvwxyz0123456789 -';
    return `x${Array.from({ length: r.between(0, 12) }, () => chars[r.int(chars.length)]).join('')}`;
  }

  /** Whatever the value, a `command` gets one of the allowed ones (see FuzzSettings.commands). */
  private entryValue(key: string, make: () => string): string {
    if (key !== 'command') return make();
    const r = this.random;
    return r.weighted<string>([
      [50, () => JSON.stringify(this.settings.commands[0])],
      [30, () => JSON.stringify(r.pick(this.settings.commands))],
      [20, () => r.pick(['null', '1', '[]', '{}', '[true]', 'false'])],
    ]);
  }

  /**
   * One of the app's own answers with one value replaced, one key added or one key removed; mostly cut down to the
   * route's own fields, so that an answer (a profile, say) comes back as a body the route takes.
   */
  private mutated(fields: readonly FieldHint[] = []): string {
    const r = this.random;
    let source = JSON.parse(r.pick(this.vocabulary.objects)) as unknown;
    if (fields.length && r.chance(0.7) && source !== null && typeof source === 'object' && !Array.isArray(source)) {
      source = Object.fromEntries(Object.entries(source).filter(([k]) => fields.some((f) => f.key === k)));
    }
    const paths: Array<Array<string | number>> = [];
    const walk = (v: unknown, at: Array<string | number>) => {
      paths.push(at);
      if (v === null || typeof v !== 'object' || paths.length > 500) return;
      for (const [k, child] of Object.entries(v)) walk(child, [...at, Array.isArray(v) ? Number(k) : k]);
    };
    walk(source, []);
    const target = r.pick(paths);
    const op = r.pick(['replace', 'add', 'remove'] as const);
    return this.write(source, [], target, op);
  }

  /** JSON text of a value, with the change made at `target`; absolute paths and commands kept safe on the way. */
  private write(v: unknown, at: Array<string | number>, target: Array<string | number>, op: 'replace' | 'add' | 'remove'): string {
    const here = at.length === target.length && at.every((p, i) => p === target[i]);
    if (here && op === 'replace') return this.value(3);
    if (typeof v === 'string') return JSON.stringify(this.relative(v));
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    const entries = Object.entries(v);
    const parts: string[] = [];
    for (const [k, child] of entries) {
      const path = [...at, Array.isArray(v) ? Number(k) : k];
      const isTarget = path.length === target.length && path.every((p, i) => p === target[i]);
      if (isTarget && op === 'remove') continue;
      const text = this.entryValue(Array.isArray(v) ? '' : k, () => this.write(child, path, target, op));
      parts.push(Array.isArray(v) ? text : `${JSON.stringify(k)}:${text}`);
    }
    if (here && op === 'add') {
      const key = this.key();
      parts.push(Array.isArray(v) ? this.value(2) : `${JSON.stringify(key)}:${this.entryValue(key, () => this.value(2))}`);
    }
    return Array.isArray(v) ? `[${parts.join(',')}]` : `{${parts.join(',')}}`;
  }

  private jsonRpc(): string {
    const r = this.random;
    const one = (): string => {
      const fields: string[] = [];
      if (r.chance(0.9)) fields.push(`"jsonrpc":${r.chance(0.85) ? '"2.0"' : this.value(1)}`);
      if (r.chance(0.8)) fields.push(`"id":${r.chance(0.7) ? String(r.between(0, 1_000)) : this.value(1)}`);
      if (r.chance(0.95)) fields.push(`"method":${JSON.stringify(r.chance(0.85) ? r.pick(MCP_METHODS) : this.string())}`);
      if (r.chance(0.85)) fields.push(`"params":${this.rpcParams()}`);
      if (r.chance(0.05)) fields.push(`${JSON.stringify(this.key())}:${this.value(1)}`);
      return `{${fields.join(',')}}`;
    };
    return r.chance(0.1) ? `[${Array.from({ length: r.between(0, 4) }, one).join(',')}]` : one();
  }

  private rpcParams(): string {
    const r = this.random;
    const name = () => JSON.stringify(r.chance(0.8) && this.vocabulary.words.length ? r.pick(this.vocabulary.words) : this.string());
    return r.weighted<string>([
      [45, () => `{"name":${name()},"arguments":${r.chance(0.2) && this.vocabulary.objects.length ? this.mutated() : this.object(3)}}`],
      [10, () => `{"uri":${JSON.stringify(r.chance(0.5) ? `brainstem://${this.string()}` : this.string())}}`],
      [10, () => `{"protocolVersion":${this.value(0)},"capabilities":${this.value(2)},"clientInfo":${this.value(2)}}`],
      [10, () => `{"ref":${this.value(2)},"argument":${this.value(2)}}`],
      [25, () => this.value(3)],
    ]);
  }

  /** A body for a route, with its content type (null: no content-type header). */
  body(route: string, fields: readonly FieldHint[] = []): { payload: string; contentType: string | null } {
    const r = this.random;
    this.budget = 300;
    const json = (payload: string) => ({ payload, contentType: 'application/json' });
    const isRpc = route === '/mcp';
    return r.weighted<{ payload: string; contentType: string | null }>([
      [isRpc ? 55 : 3, () => json(this.jsonRpc())],
      [fields.length ? 45 : 0, () => json(this.shaped(fields))],
      [fields.length ? 20 : 40, () => json(this.object(r.between(0, 4)))],
      [this.vocabulary.objects.length ? 16 : 0, () => json(this.mutated(fields))],
      [8, () => json(this.value(2))],
      [6, () => json(r.chance(0.5) ? r.pick(BROKEN_JSON) : this.object(2).slice(0, -1 - r.int(3)))],
      [5, () => json(this.nested())],
      [1.5, () => json(this.huge())],
      [9, () => ({ payload: r.chance(0.5) ? this.object(2) : this.string(), contentType: r.pick(CONTENT_TYPES) })],
      [3, () => ({ payload: this.object(1), contentType: null })],
      [4, () => json(r.pick(['{}', '[]', '', 'null']))],
    ]);
  }

  /** Arrays and objects nested around the parser's depth limit, or far past it. */
  private nested(): string {
    const r = this.random;
    const depth = r.chance(0.7) ? r.between(55, 70) : r.between(500, 20_000);
    const open = r.chance(0.5) ? '[' : '{"a":';
    const close = open === '[' ? ']' : '}';
    return `${open.repeat(depth)}${this.value(0)}${close.repeat(depth)}`;
  }

  /** A body just under the size limit, or just over it. */
  private huge(): string {
    const r = this.random;
    const size = r.chance(0.7) ? this.settings.bodyLimit - r.between(40, 400) : this.settings.bodyLimit + r.between(1, 400);
    const key = this.key();
    const head = `{${JSON.stringify(key)}:"`;
    const unit = r.pick(['x', '\u00e9', '(', '\\u0000']);
    const fill = unit.repeat(Math.max(0, Math.floor((size - head.length - 2) / Buffer.byteLength(unit))));
    return `${head}${fill}"}`;
  }

  // ---- URL ----

  url(route: string, fields: readonly FieldHint[] = []): string {
    const r = this.random;
    let path = route.replace(/:[A-Za-z_]+/g, () => this.param());
    if (r.chance(0.04)) path = r.pick([`${path}/`, `${path}//`, `${path}/..`, `${path}/./x`, path.toUpperCase(), path.replace('/api/v1', '/api/v1/'), `${path}%2F..`]);
    return r.chance(fields.length ? 0.5 : 0.3) ? `${path}?${this.query(fields)}` : path;
  }

  private param(): string {
    const r = this.random;
    return r.weighted<string>([
      [50, () => percentEncode(this.vocabulary.ids.length ? r.pick(this.vocabulary.ids) : 'x')],
      [15, () => percentEncode(this.vocabulary.words.length ? r.pick(this.vocabulary.words) : 'x')],
      [20, () => r.pick(RAW_PARAMS)],
      [15, () => percentEncode(this.string())],
    ]);
  }

  private query(fields: readonly FieldHint[]): string {
    const r = this.random;
    const parts: string[] = [];
    for (let i = r.between(1, 4); i > 0; i--) {
      parts.push(
        r.weighted<string>([
          [fields.length ? 60 : 0, () => this.hintedParam(r.pick(fields))],
          [55, () => `${percentEncode(this.key())}=${percentEncode(this.string())}`],
          [20, () => `${percentEncode(this.key())}=${r.pick(NUMBER_LITERALS)}`],
          [25, () => r.pick(RAW_QUERIES)],
        ]),
      );
    }
    return parts.join('&');
  }

  private hintedParam(field: FieldHint): string {
    const r = this.random;
    const value = r.weighted<string>([
      [field.words.length ? 40 : 0, () => percentEncode(String(r.pick(field.words)))],
      [30, () => percentEncode(scalarText(JSON.parse(this.typed(field.checks))))],
      [15, () => r.pick(NUMBER_LITERALS)],
      [15, () => percentEncode(this.string())],
    ]);
    return `${percentEncode(field.key)}=${value}`;
  }
}

const scalarText = (v: unknown): string => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/**
 * Percent-encodes every byte but unreserved ASCII. Unlike encodeURIComponent it cannot throw: a lone surrogate
 * is written as U+FFFD, as UTF-8 would.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
