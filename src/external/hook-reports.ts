import { HookReport } from '../sessions/external-sessions';
import { ClaudeHookEvent } from './claude-hook-event';

/** claude's question tool: its call is a question to the user (待拍板), not work. */
const QUESTION_TOOL = 'AskUserQuestion';
/** Notification types (claude's notification_type) that mean claude waits on its user. */
const PERMISSION_PROMPT = 'permission_prompt';
const ELICITATION = 'elicitation_dialog';

/** The tool claude's own permission prompt names in its notification ("Claude needs your permission to use Bash"). */
function promptTool(message: string): string {
  return /permission to use (\S+)/.exec(message)?.[1] ?? 'unknown';
}

/**
 * What a hook event reports of its session (the table of docs/guide/external-sessions.md#states): a prompt or a tool
 * call is work, a Stop ends a turn, a PermissionRequest (or claude's own permission prompt) asks for a permission, a
 * question asks the user, a SessionEnd ends the session. Null: the event only says the session runs (SessionStart), or
 * nothing Brainstem follows (other notifications).
 */
export function hookReportOf(event: ClaudeHookEvent): HookReport | null {
  switch (event.name) {
    case 'SessionStart':
      return null;
    case 'UserPromptSubmit':
      return { kind: 'activity', activity: 'prompt', tool: null };
    case 'PreToolUse':
      if (event.tool_name === QUESTION_TOOL && event.questions.length > 0) return { kind: 'question', question: event.questions.join('\n') };
      return { kind: 'activity', activity: 'tool', tool: event.tool_name };
    case 'PermissionRequest':
      // The question tool asks its user through the permission dialog: it is pending_decision already, not a permission.
      return event.tool_name === QUESTION_TOOL ? null : { kind: 'permission', tool: event.tool_name, input: event.tool_input };
    case 'Notification':
      if (event.notification_type === PERMISSION_PROMPT) return { kind: 'permission', tool: promptTool(event.message), input: { notification: event.message }, prompt_only: true };
      if (event.notification_type === ELICITATION) return { kind: 'question', question: event.message || 'claude asks its user a question' };
      return null;
    case 'Stop':
      return { kind: 'turn_ended', result: event.last_assistant_message };
    case 'SessionEnd':
      return { kind: 'ended' };
  }
}
