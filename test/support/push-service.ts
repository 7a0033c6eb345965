import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

// web-push-testing ships plain CommonJS without types: the parts used here.
const WebPushTestingServer = require('web-push-testing/src/server.js') as new (model: unknown, port: number) => { _app: Parameters<typeof createServer>[1]; setRequestHandlers(): void };
const { PushApiModel } = require('web-push-testing/src/PushApiModel.js') as { PushApiModel: new () => { notifyUrl: string } };

export interface TestSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  clientHash: string;
}

/**
 * A Web Push service (the `web-push-testing` package, pinned in devDependencies) in this process, on a loopback port:
 * it checks the VAPID signature, decrypts each message as a browser would, and keeps the plaintext for the test.
 */
export class TestPushService {
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<TestPushService> {
    const model = new PushApiModel();
    const testing = new WebPushTestingServer(model, 0);
    testing.setRequestHandlers();
    const server = createServer(testing._app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    model.notifyUrl = `${url}/notify/`;
    return new TestPushService(server, url);
  }

  /** What a browser's pushManager.subscribe() answers, for the application server key given. */
  async subscribe(applicationServerKey: string): Promise<TestSubscription> {
    const res = await this.post('/subscribe', { applicationServerKey, userVisibleOnly: 'true' });
    return (res as { data: TestSubscription }).data;
  }

  /** The decrypted messages pushed to a subscription so far. */
  async messages(clientHash: string): Promise<string[]> {
    const res = await this.post('/get-notifications', { clientHash });
    return (res as { data: { messages: string[] } }).data.messages;
  }

  async expire(clientHash: string): Promise<void> {
    await this.post(`/expire-subscription/${clientHash}`, {});
  }

  private async post(path: string, body: unknown): Promise<unknown> {
    const res = await fetch(`${this.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`push service ${path} answered ${res.status}: ${text}`);
    return (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
