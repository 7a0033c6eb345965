import { IncomingMessage, ServerResponse } from 'node:http';
import { FakeModelApi } from './fake-model-api';

type GenerateRequest = { contents: unknown[]; systemInstruction?: unknown; tools?: Array<{ functionDeclarations?: Array<{ name: string }> }> };

/** What the fake model answers to the n-th call: a text, a function call, or a refusal (400). */
export type GeminiReply = { text: string } | { call: string; args: Record<string, unknown> } | { refuse: string };

/** A stand-in for the Gemini API, enough for a real `gemini` to run turns against it (GOOGLE_GEMINI_BASE_URL). */
/** The tokens the fake says one call used, as usageMetadata reports them (the prompt count includes the cached ones). */
export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export class FakeGeminiApi extends FakeModelApi<GenerateRequest> {
  /** The usage each call reports; what a test sets it to is what gemini's own accounting must add up to. */
  usage: (n: number) => GeminiUsage = () => ({ promptTokenCount: 5, candidatesTokenCount: 2 });

  constructor(private readonly reply: (n: number) => GeminiReply = (n) => ({ text: `reply ${n}` })) {
    super();
  }

  /** The built-in tools the n-th call offered the model. */
  toolsOf(n: number): string[] {
    return (this.requests[n - 1]?.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
  }

  protected isModelCall(req: IncomingMessage): boolean {
    return req.method === 'POST' && /:(stream)?generateContent\b/i.test(req.url ?? '');
  }

  protected other(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"totalTokens":5}');
  }

  protected answer(_request: GenerateRequest, n: number, res: ServerResponse): void {
    const reply = this.reply(n);
    if ('refuse' in reply) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 400, message: reply.refuse, status: 'INVALID_ARGUMENT' } }));
      return;
    }
    const usage = this.usage(n);
    const part = 'call' in reply ? { functionCall: { name: reply.call, args: reply.args } } : { text: reply.text };
    const chunk = {
      candidates: [{ content: { parts: [part], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0) },
    };
    const streamed = res.req.url?.includes('alt=sse') === true;
    res.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' });
    res.end(streamed ? `data: ${JSON.stringify(chunk)}\n\n` : JSON.stringify(chunk));
  }
}
