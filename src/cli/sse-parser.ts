export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Splits an SSE response, fed chunk by chunk, into its messages. Comments are dropped; a message with neither data
 * nor an id (a comment alone) is none.
 */
export class SseParser {
  private rest = '';

  push(chunk: string): SseMessage[] {
    const text = this.rest + chunk;
    // A chunk may end inside a \r\n: its \r waits for the next chunk rather than count as a line end of its own.
    const held = text.endsWith('\r') ? '\r' : '';
    const blocks = text.slice(0, text.length - held.length).replace(/\r\n?/g, '\n').split('\n\n');
    this.rest = (blocks.pop() ?? '') + held;
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
    return messages;
  }
}
