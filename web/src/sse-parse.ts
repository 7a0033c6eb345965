export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** Splits a growing text into complete SSE messages; what is left is the start of the next one. */
export function parseSse(buffer: string): { messages: SseMessage[]; rest: string } {
  // A buffer may end inside a \r\n: its \r waits for what follows rather than count as a line end of its own.
  const held = buffer.endsWith('\r') ? '\r' : '';
  const text = buffer.slice(0, buffer.length - held.length).replace(/\r\n?/g, '\n');
  const blocks = text.split('\n\n');
  const rest = (blocks.pop() ?? '') + held;
  const messages: SseMessage[] = [];
  for (const block of blocks) {
    const message: SseMessage = { data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') message.id = value;
      else if (field === 'event') message.event = value;
      else if (field === 'data') data.push(value);
    }
    message.data = data.join('\n');
    if (message.id !== undefined || data.length > 0) messages.push(message);
  }
  return { messages, rest };
}
