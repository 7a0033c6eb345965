import { IncomingMessage, ServerResponse } from 'node:http';
import { FakeModelApi } from './fake-model-api';

export type ResponsesRequest = { model: string; input: unknown[]; instructions?: string };

/**
 * What the fake model answers: a message, JavaScript for codex's `exec` tool (how codex 0.169 reaches MCP tools), or
 * a failed response with the API's error code (`context_length_exceeded`: the context window is full).
 */
export type ResponsesReply =
  | { text: string }
  | { exec: string }
  | { fail: { code: string; message: string } }
  /** A ChatGPT plan's usage limit, as the API refuses it: 429 `usage_limit_reached` until `resets_at` (epoch seconds). */
  | { usage_limited: { resets_at: number } };

/**
 * A stand-in for the OpenAI Responses API, enough for a real `codex` to run turns against it (a model provider
 * with this base_url): each request is answered with one streamed output item, `reply n` unless the test
 * chooses, except the first `drops` requests, whose stream ends before response.completed (what codex retries).
 */
/** The tokens the fake says one response used (input includes the cached ones, as the Responses API counts them). */
export interface OpenAiUsage {
  input_tokens: number;
  cached_tokens?: number;
  output_tokens: number;
}

export class FakeOpenAiApi extends FakeModelApi<ResponsesRequest> {
  /** The usage each response reports; what a test sets it to is what codex's own accounting must add up to. */
  usage: (requestNumber: number) => OpenAiUsage = () => ({ input_tokens: 5, output_tokens: 2 });

  constructor(
    private readonly drops = 0,
    private readonly reply: (requestNumber: number, request: ResponsesRequest) => ResponsesReply = (n) => ({ text: `reply ${n}` }),
  ) {
    super();
  }

  /** Resolves with the base_url a model provider takes. */
  override async start(): Promise<string> {
    const origin = await super.start();
    // codex tries a WebSocket first and falls back to HTTPS streaming when the upgrade is refused.
    this.server!.on('upgrade', (_req, socket) => socket.destroy());
    return `${origin}/v1`;
  }

  protected isModelCall(req: IncomingMessage): boolean {
    return req.method === 'POST' && req.url?.endsWith('/responses') === true;
  }

  protected other(res: ServerResponse): void {
    res.writeHead(404).end();
  }

  protected answer(request: ResponsesRequest, n: number, res: ServerResponse): void {
    const sse = FakeModelApi.sse;
    const reply = this.reply(n, request);
    if ('usage_limited' in reply) {
      const { resets_at } = reply.usage_limited;
      const error = { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at, resets_in_seconds: Math.max(0, resets_at - Math.floor(Date.now() / 1000)) };
      res.writeHead(429, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse('response.created', { response: { id: `resp_${n}` } }));
    if (n <= this.drops) {
      res.end();
      return;
    }
    if ('fail' in reply) {
      res.end(sse('response.failed', { response: { id: `resp_${n}`, error: reply.fail } }));
      return;
    }
    const item =
      'exec' in reply
        ? { type: 'custom_tool_call', id: `ctc_${n}`, call_id: `call_${n}`, name: 'exec', input: reply.exec, status: 'completed' }
        : { type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
    res.write(sse('response.output_item.done', { output_index: 0, item }));
    const u = this.usage(n);
    const usage = {
      input_tokens: u.input_tokens,
      input_tokens_details: u.cached_tokens === undefined ? null : { cached_tokens: u.cached_tokens },
      output_tokens: u.output_tokens,
      output_tokens_details: null,
      total_tokens: u.input_tokens + u.output_tokens,
    };
    res.end(sse('response.completed', { response: { id: `resp_${n}`, usage } }));
  }
}
