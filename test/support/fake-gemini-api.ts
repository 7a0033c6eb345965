import { IncomingMessage, ServerResponse } from 'node:http';
import { FakeModelApi } from './fake-model-api';

type GenerateRequest = { contents: unknown[]; systemInstruction?: unknown; tools?: Array<{ functionDeclarations?: Array<{ name: string }> }> };

/**
 * A stand-in for the Gemini API, enough for a real `gemini` to run turns against it (GOOGLE_GEMINI_BASE_URL):
 * each generateContent call is answered with one text, or refused with a 400 when the test says so.
 */
export class FakeGeminiApi extends FakeModelApi<GenerateRequest> {
  constructor(private readonly refuse = false) {
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
    if (this.refuse) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } }));
      return;
    }
    const chunk = {
      candidates: [{ content: { parts: [{ text: `reply ${n}` }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
    };
    const streamed = res.req.url?.includes('alt=sse') === true;
    res.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' });
    res.end(streamed ? `data: ${JSON.stringify(chunk)}\n\n` : JSON.stringify(chunk));
  }
}
