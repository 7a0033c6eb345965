import { DomainError } from '../common/domain-error';
import { MAX_HOOK_TEXT_CHARS, MAX_TOOL_INPUT_BYTES, parseHookReport } from './claude-hook-event';

const common = {
  session_id: '985276aa-caf2-40bd-a1fa-a5320cf1ec08',
  transcript_path: '/home/u/.claude/projects/-repo/985276aa-caf2-40bd-a1fa-a5320cf1ec08.jsonl',
  cwd: '/repo',
};

const refusal = (name: string, body: unknown): string => {
  try {
    parseHookReport(name, body);
  } catch (e) {
    if (e instanceof DomainError && e.code === 'invalid_input') return e.message;
    throw e;
  }
  throw new Error('not refused');
};

describe('claude hook events, as Brainstem reads them', () => {
  it("Given claude's Stop input with fields Brainstem does not read, When it is parsed, Then only the fields it reads are kept", () => {
    const event = { ...common, hook_event_name: 'Stop', prompt_id: 'p', effort: { level: 'medium' }, stop_hook_active: true, last_assistant_message: 'done', background_tasks: [] };
    expect(parseHookReport('Stop', { event, claude_pid: 4242 })).toEqual({
      event: { ...common, name: 'Stop', stop_hook_active: true, last_assistant_message: 'done' },
      claude_pid: 4242,
    });
  });

  it('Given a PreToolUse of the question tool, When it is parsed, Then its questions are kept and its other input dropped', () => {
    const event = { ...common, hook_event_name: 'PreToolUse', tool_name: 'AskUserQuestion', tool_input: { questions: [{ question: 'Which database?', options: [] }, { header: 'no question' }] } };
    expect(parseHookReport('PreToolUse', { event }).event).toEqual({ ...common, name: 'PreToolUse', tool_name: 'AskUserQuestion', questions: ['Which database?'] });
  });

  it('Given long texts, When parsed, Then they are cut to their bound; a tool input too large for its deny rules to judge is refused', () => {
    const long = 'x'.repeat(MAX_HOOK_TEXT_CHARS + 10);
    const parsed = parseHookReport('UserPromptSubmit', { event: { ...common, hook_event_name: 'UserPromptSubmit', prompt: long } }).event;
    expect(parsed.name === 'UserPromptSubmit' && parsed.prompt.length).toBe(MAX_HOOK_TEXT_CHARS + 1);
    const big = { command: 'y'.repeat(MAX_TOOL_INPUT_BYTES) };
    expect(refusal('PermissionRequest', { event: { ...common, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: big } })).toContain('event.tool_input: must be at most');
  });

  it.each<[string, string, unknown, string]>([
    ['an event name Brainstem does not install', 'PostCompact', { event: common }, 'event: must be one of'],
    ['a body that is not an object', 'Stop', [], 'body: must be a JSON object'],
    ['no event', 'Stop', { claude_pid: 3 }, 'event: must be a JSON object'],
    ['an event for another hook', 'Stop', { event: { ...common, hook_event_name: 'SessionEnd' } }, 'but the report is for Stop'],
    ['a session id of other characters', 'Stop', { event: { ...common, hook_event_name: 'Stop', session_id: '../../etc' } }, 'event.session_id: must be 1 to 128'],
    ['a relative cwd', 'Stop', { event: { ...common, hook_event_name: 'Stop', cwd: 'repo' } }, 'event.cwd: must be an absolute path'],
    ['no cwd', 'Stop', { event: { session_id: common.session_id, hook_event_name: 'Stop' } }, 'event.cwd: is required'],
    ['a NUL in a path', 'Stop', { event: { ...common, hook_event_name: 'Stop', transcript_path: '/a\0b' } }, 'event.transcript_path: must be a string without NUL'],
    ['a pid that is not one', 'Stop', { event: { ...common, hook_event_name: 'Stop' }, claude_pid: 1 }, 'claude_pid: must be a process id'],
    ['a permission request without its input', 'PermissionRequest', { event: { ...common, hook_event_name: 'PermissionRequest', tool_name: 'Bash' } }, 'event.tool_input: must be a JSON object'],
  ])('Given %s, When parsed, Then it is refused naming what was wrong', (_what, name, body, message) => {
    expect(refusal(name, body)).toContain(message);
  });
});
