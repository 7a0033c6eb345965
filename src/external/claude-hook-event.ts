import { DomainError } from '../common/domain-error';
import { JsonObject } from '../sessions/session.events';

/**
 * A claude hook event as Brainstem keeps it (docs/guide/external-sessions.md): the fields it reads, checked and
 * bounded; every other field claude sends is dropped. Nothing in it is ever executed or compiled into a pattern.
 */

/** The hook events Brainstem installs, in the order claude fires them in a session. */
export const HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'Notification', 'Stop', 'SessionEnd'] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

export const isHookEventName = (name: string): name is HookEventName => (HOOK_EVENTS as readonly string[]).includes(name);

/** The most of a text field kept (a prompt, claude's last message, a notification): the transcript has the rest. */
export const MAX_HOOK_TEXT_CHARS = 16_384;
/** The most a permission request's tool input may weigh as JSON: more is refused (its deny rules must see it whole). */
export const MAX_TOOL_INPUT_BYTES = 65_536;
const MAX_PATH_CHARS = 4096;
const MAX_NAME_CHARS = 256;
/** claude's session ids are UUIDs; any id of these characters is taken. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

interface Common {
  session_id: string;
  transcript_path: string | null;
  cwd: string;
}

export type ClaudeHookEvent = Common &
  (
    | { name: 'SessionStart'; source: string | null }
    | { name: 'UserPromptSubmit'; prompt: string }
    | { name: 'PreToolUse'; tool_name: string; questions: string[] }
    | { name: 'PermissionRequest'; tool_name: string; tool_input: JsonObject }
    | { name: 'Notification'; message: string; notification_type: string | null }
    | { name: 'Stop'; last_assistant_message: string | null; stop_hook_active: boolean }
    | { name: 'SessionEnd'; reason: string | null }
  );

/** What the hook command posts: claude's event as it came on stdin, and claude's pid where the hook could tell it. */
export interface HookReportBody {
  event: ClaudeHookEvent;
  claude_pid: number | null;
}

type Fields = Record<string, unknown>;

const clip = (text: string, max = MAX_HOOK_TEXT_CHARS): string => (text.length > max ? `${text.slice(0, max)}…` : text);
const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads the fields it names, each problem said with its path; every field it does not name is dropped. */
class Reader {
  readonly problems: string[] = [];

  constructor(
    private readonly fields: Fields,
    private readonly prefix: string,
  ) {}

  string(key: string, max: number, required: true): string;
  string(key: string, max: number, required: false): string | null;
  string(key: string, max: number, required: boolean): string | null {
    const v = this.fields[key];
    if (v === undefined || v === null) {
      if (required) this.problems.push(`${this.prefix}${key}: is required`);
      return null;
    }
    if (typeof v !== 'string' || v.includes('\0')) {
      this.problems.push(`${this.prefix}${key}: must be a string without NUL`);
      return null;
    }
    if (v.length > max) {
      this.problems.push(`${this.prefix}${key}: must be at most ${max} characters`);
      return null;
    }
    return v;
  }

  /** A text claude may make long: kept, cut to its bound. */
  text(key: string): string | null {
    const v = this.fields[key];
    if (typeof v !== 'string') return null;
    return clip(v.split('\0').join(''));
  }

  boolean(key: string): boolean {
    return this.fields[key] === true;
  }
}

/** The questions of an AskUserQuestion call (tool_input.questions[].question), bounded. */
function questionsOf(input: unknown): string[] {
  if (!isObject(input) || !Array.isArray(input.questions)) return [];
  return input.questions
    .slice(0, 8)
    .map((q: unknown) => (isObject(q) && typeof q.question === 'string' ? clip(q.question, 2000) : null))
    .filter((q): q is string => q !== null);
}

function toolInputOf(input: unknown, problems: string[]): JsonObject {
  if (!isObject(input)) {
    problems.push('event.tool_input: must be a JSON object');
    return {};
  }
  if (Buffer.byteLength(JSON.stringify(input), 'utf8') > MAX_TOOL_INPUT_BYTES) {
    problems.push(`event.tool_input: must be at most ${MAX_TOOL_INPUT_BYTES} bytes of JSON`);
    return {};
  }
  return input;
}

/** A hook's report, checked; `name` is the event the hook was installed for, which the event must say it is. */
export function parseHookReport(name: string, body: unknown): HookReportBody {
  if (!isHookEventName(name)) throw new DomainError('invalid_input', `event: must be one of ${HOOK_EVENTS.join(', ')}, not ${JSON.stringify(name.slice(0, 64))}`);
  if (!isObject(body)) throw new DomainError('invalid_input', 'body: must be a JSON object');
  const problems: string[] = [];
  const pid = body.claude_pid;
  if (pid !== undefined && pid !== null && !(Number.isSafeInteger(pid) && (pid as number) > 1)) problems.push('claude_pid: must be a process id (an integer above 1) or null');
  const e = body.event;
  if (!isObject(e)) throw new DomainError('invalid_input', 'event: must be a JSON object (the hook input claude gives on stdin)');
  const r = new Reader(e, 'event.');
  const said = r.string('hook_event_name', MAX_NAME_CHARS, true);
  if (said !== null && said !== name) problems.push(`event.hook_event_name: is ${JSON.stringify(said.slice(0, 64))}, but the report is for ${name}`);
  const session_id = r.string('session_id', 128, true);
  if (session_id !== null && !SESSION_ID.test(session_id)) problems.push('event.session_id: must be 1 to 128 letters, digits, - or _');
  const cwd = r.string('cwd', MAX_PATH_CHARS, true);
  if (cwd !== null && !cwd.startsWith('/')) problems.push('event.cwd: must be an absolute path');
  const common: Common = { session_id: session_id ?? '', transcript_path: r.string('transcript_path', MAX_PATH_CHARS, false), cwd: cwd ?? '' };
  const event = ((): ClaudeHookEvent => {
    switch (name) {
      case 'SessionStart':
        return { ...common, name, source: r.string('source', MAX_NAME_CHARS, false) };
      case 'UserPromptSubmit':
        return { ...common, name, prompt: r.text('prompt') ?? '' };
      case 'PreToolUse':
        return { ...common, name, tool_name: r.string('tool_name', MAX_NAME_CHARS, true) ?? '', questions: questionsOf(e.tool_input) };
      case 'PermissionRequest':
        return { ...common, name, tool_name: r.string('tool_name', MAX_NAME_CHARS, true) ?? '', tool_input: toolInputOf(e.tool_input, problems) };
      case 'Notification':
        return { ...common, name, message: r.text('message') ?? '', notification_type: r.string('notification_type', MAX_NAME_CHARS, false) };
      case 'Stop':
        return { ...common, name, last_assistant_message: r.text('last_assistant_message'), stop_hook_active: r.boolean('stop_hook_active') };
      case 'SessionEnd':
        return { ...common, name, reason: r.string('reason', MAX_NAME_CHARS, false) };
    }
  })();
  const all = [...r.problems, ...problems];
  if (all.length > 0) throw new DomainError('invalid_input', all.join('; '));
  return { event, claude_pid: typeof pid === 'number' ? pid : null };
}
