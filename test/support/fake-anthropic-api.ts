import { IncomingMessage, ServerResponse } from 'node:http';
import { FakeModelApi } from './fake-model-api';

/** What the fake model answers to one /v1/messages request. */
export type ModelReply = { text: string } | { tool: string; input: Record<string, unknown> } | { refuse: string };

export type MessagesRequest = { model: string; messages: unknown[]; system?: unknown; tools?: Array<{ name: string }> };

/**
 * A stand-in for the Anthropic Messages API, enough for a real `claude` to run turns against it
 * (ANTHROPIC_BASE_URL): streamed replies chosen by the test, each held until the test lets replies go.
 */
export class FakeAnthropicApi extends FakeModelApi<MessagesRequest> {
  private held: Array<() => void> = [];
  private holding = true;

  constructor(private readonly reply: (requestNumber: number, request: MessagesRequest) => ModelReply) {
    super();
  }

  /** Holds later replies again, until the next releaseAll. */
  hold(): void {
    this.holding = true;
  }

  /** Sends every held reply, and any later one at once. */
  releaseAll(): void {
    this.holding = false;
    for (const go of this.held.splice(0)) go();
  }

  override async close(): Promise<void> {
    this.releaseAll();
    await super.close();
  }

  protected isModelCall(req: IncomingMessage): boolean {
    return req.method === 'POST' && req.url?.startsWith('/v1/messages') === true && !req.url.includes('count_tokens');
  }

  protected other(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":1}');
  }

  protected answer(request: MessagesRequest, n: number, res: ServerResponse): void {
    const go = () => this.stream(res, request.model, n, this.reply(n, request));
    if (this.holding) this.held.push(go);
    else go();
  }

  private stream(res: ServerResponse, model: string, n: number, reply: ModelReply): void {
    if ('refuse' in reply) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: reply.refuse } }));
      return;
    }
    const event = (type: string, data: object) => res.write(FakeModelApi.sse(type, data));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    event('message_start', { message: { id: `msg_${n}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
    if ('tool' in reply) {
      event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_${n}`, name: reply.tool, input: {} } });
      event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) } });
    } else {
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: reply.text } });
    }
    event('content_block_stop', { index: 0 });
    event('message_delta', { delta: { stop_reason: 'tool' in reply ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
    event('message_stop', {});
    res.end();
  }
}
