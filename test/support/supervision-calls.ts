import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { TestApp } from './test-app';
import { WORKERS, WorkerReaper } from './workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** REST calls on the app a describe block holds (`app` read at each call), and a quiet command worker it reaps. */
export function supervisionCalls(app: () => TestApp, reaper: WorkerReaper) {
  const req = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const res = await app().inject({ method, url: `/api/v1${url}`, ...(payload !== undefined ? { payload: payload as Json } : {}) });
    return { status: res.statusCode, body: res.body ? (res.json() as Json) : {} };
  };
  const startWorker = async (): Promise<Json> => {
    const res = await req('POST', '/coding-sessions', { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() });
    expect(res.status).toBe(201);
    reaper.track(res.body.pid);
    return res.body;
  };
  return { req, startWorker };
}
