import { JournalEvent } from '../../journal/journal.port';
import { JsonObject } from '../../sessions/session.events';
import { ChatMessage } from '../chat.service';
import { ChatInput } from './brain-conversation';

/** How much of a tool call's input an activity entry in the chat shows. */
const ACTIVITY_INPUT_CHARS = 200;

/** A compact activity entry: the tool (without the mcp__brainstem__ prefix) and the head of its input. */
export function activityText(name: string, input: JsonObject): string {
  const tool = name.startsWith('mcp__brainstem__') ? name.slice('mcp__brainstem__'.length) : name;
  const shown = JSON.stringify(input);
  return `→ ${tool} ${shown.length > ACTIVITY_INPUT_CHARS ? `${shown.slice(0, ACTIVITY_INPUT_CHARS)}…` : shown}`;
}

/** What of the chat goes to the brain: the user's messages and answers, and the human gate's outcomes. */
export function chatInput(m: ChatMessage): ChatInput | null {
  if (m.role === 'user' && m.kind === 'message') return { seq: m.seq, role: 'user', text: m.text, session_id: m.session_id };
  if (m.role === 'system' && m.kind === 'confirmation') return { seq: m.seq, role: 'system', text: m.text, session_id: null };
  return null;
}

export function toChat(e: JournalEvent): ChatMessage {
  return { seq: e.seq, at: e.at, ...(e.data as Omit<ChatMessage, 'seq' | 'at'>) };
}
