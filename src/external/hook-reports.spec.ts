import { ClaudeHookEvent } from './claude-hook-event';
import { hookReportOf } from './hook-reports';

const common = { session_id: 's', transcript_path: null, cwd: '/repo' };

describe('what each claude hook event reports of its session', () => {
  it.each<[string, ClaudeHookEvent, unknown]>([
    ['SessionStart: only the run of claude', { ...common, name: 'SessionStart', source: 'startup' }, null],
    ['UserPromptSubmit: work', { ...common, name: 'UserPromptSubmit', prompt: 'hi' }, { kind: 'activity', activity: 'prompt', tool: null }],
    ['PreToolUse: work', { ...common, name: 'PreToolUse', tool_name: 'Bash', questions: [] }, { kind: 'activity', activity: 'tool', tool: 'Bash' }],
    ['PreToolUse of the question tool: a question', { ...common, name: 'PreToolUse', tool_name: 'AskUserQuestion', questions: ['A?', 'B?'] }, { kind: 'question', question: 'A?\nB?' }],
    ['PermissionRequest: a permission', { ...common, name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } }, { kind: 'permission', tool: 'Bash', input: { command: 'ls' } }],
    ['PermissionRequest of the question tool: nothing more', { ...common, name: 'PermissionRequest', tool_name: 'AskUserQuestion', tool_input: {} }, null],
    [
      "claude's own permission prompt: a permission unless one is pending",
      { ...common, name: 'Notification', message: 'Claude needs your permission to use Bash', notification_type: 'permission_prompt' },
      { kind: 'permission', tool: 'Bash', input: { notification: 'Claude needs your permission to use Bash' }, prompt_only: true },
    ],
    ['an elicitation dialog: a question', { ...common, name: 'Notification', message: 'Pick one', notification_type: 'elicitation_dialog' }, { kind: 'question', question: 'Pick one' }],
    ['an idle notification: nothing', { ...common, name: 'Notification', message: 'waiting', notification_type: 'idle_prompt' }, null],
    ['Stop: the turn ended, with claude\'s last message', { ...common, name: 'Stop', last_assistant_message: 'done', stop_hook_active: false }, { kind: 'turn_ended', result: 'done' }],
    ['SessionEnd: the end', { ...common, name: 'SessionEnd', reason: 'other' }, { kind: 'ended' }],
  ])('Given %s', (_what, event, report) => {
    expect(hookReportOf(event)).toEqual(report);
  });
});
