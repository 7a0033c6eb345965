import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** A model vendor's HTTP API stood in for on a loopback port: requests are kept, answers are the subclass's. */
export abstract class FakeModelApi<Request> {
  readonly requests: Request[] = [];
  /** When each model call arrived (epoch ms), in the order of `requests`. */
  readonly arrivals: number[] = [];
  protected server: Server | null = null;

  /** Listens, and resolves with the origin (`http://127.0.0.1:<port>`). */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        if (!this.isModelCall(req)) return this.other(res);
        this.requests.push(JSON.parse(body) as Request);
        this.arrivals.push(Date.now());
        this.answer(this.requests[this.requests.length - 1], this.requests.length, res);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  protected abstract isModelCall(req: IncomingMessage): boolean;
  /** Anything else the client asks. */
  protected abstract other(res: ServerResponse): void;
  /** Answers the n-th model call (from 1). */
  protected abstract answer(request: Request, n: number, res: ServerResponse): void;

  protected static sse(type: string, data: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  }
}
