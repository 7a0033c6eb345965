import { IncomingMessage, ServerResponse } from 'node:http';
import { FakeModelApi } from './fake-model-api';

/** What the fake model answers to one /v1/messages request. */
export type ModelReply =
  | { text: string }
  | { tool: string; input: Record<string, unknown> }
  | { refuse: string }
  | { rate_limited: string }
  /** A subscription's usage limit, as the API refuses it: 429 with the unified headers saying `rejected` until `resets_at` (epoch seconds). */
  | { usage_limited: { resets_at: number; claim: string } };

/** The unified rate-limit state the API's headers report (what claude shows as its rate limits). */
export interface AnthropicRateLimit {
  status: 'allowed' | 'allowed_warning' | 'rejected';
  /** Epoch seconds. */
  resets_at: number;
  claim: string;
  utilization?: number;
}

export type MessagesRequest = { model: string; messages: unknown[]; system?: unknown; tools?: Array<{ name: string }> };

/** The tokens the fake says one reply used, as the Messages API reports them (input in message_start, output in message_delta). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/**
 * A stand-in for the Anthropic Messages API, enough for a real `claude` to run turns against it
 * (ANTHROPIC_BASE_URL): streamed replies chosen by the test, each held until the test lets replies go.
 */
export class FakeAnthropicApi extends FakeModelApi<MessagesRequest> {
  private held: Array<() => void> = [];
  private holding = true;

  /** The usage each reply reports; what a test sets it to is what the CLI's own accounting must add up to. */
  usage: (requestNumber: number, request: MessagesRequest) => AnthropicUsage = () => ({ input_tokens: 1, output_tokens: 1 });
  /** The rate-limit state each answer's headers report, if any. */
  rateLimit: (requestNumber: number) => AnthropicRateLimit | null = () => null;

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
    const go = () => this.stream(res, request.model, n, this.reply(n, request), this.usage(n, request), this.rateLimitHeaders(n));
    if (this.holding) this.held.push(go);
    else go();
  }

  private rateLimitHeaders(n: number): Record<string, string> {
    const limit = this.rateLimit(n);
    if (!limit) return {};
    return {
      'anthropic-ratelimit-unified-status': limit.status,
      'anthropic-ratelimit-unified-reset': String(limit.resets_at),
      'anthropic-ratelimit-unified-representative-claim': limit.claim,
      ...(limit.utilization === undefined ? {} : { [`anthropic-ratelimit-unified-${limit.claim.replace('_', '-')}-utilization`]: String(limit.utilization) }),
    };
  }

  private stream(res: ServerResponse, model: string, n: number, reply: ModelReply, usage: AnthropicUsage, headers: Record<string, string>): void {
    if ('refuse' in reply) {
      res.writeHead(400, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: reply.refuse } }));
      return;
    }
    if ('usage_limited' in reply) {
      const limit = {
        'anthropic-ratelimit-unified-status': 'rejected',
        'anthropic-ratelimit-unified-reset': String(reply.usage_limited.resets_at),
        'anthropic-ratelimit-unified-representative-claim': reply.usage_limited.claim,
      };
      res.writeHead(429, { 'content-type': 'application/json', ...headers, ...limit }).end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'usage limit reached' } }));
      return;
    }
    if ('rate_limited' in reply) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3600', ...headers }).end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: reply.rate_limited } }));
      return;
    }
    const event = (type: string, data: object) => res.write(FakeModelApi.sse(type, data));
    res.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
    event('message_start', { message: { id: `msg_${n}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    if ('tool' in reply) {
      event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_${n}`, name: reply.tool, input: {} } });
      event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) } });
    } else {
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: reply.text } });
    }
    event('content_block_stop', { index: 0 });
    event('message_delta', { delta: { stop_reason: 'tool' in reply ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    event('message_stop', {});
    res.end();
  }
}
