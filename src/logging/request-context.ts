import { AsyncLocalStorage } from 'node:async_hooks';

/** The id of the request being handled, carried from the HTTP hooks to the journal's appends without threading it. */
const context = new AsyncLocalStorage<string>();

export function runWithRequestId<T>(id: string, fn: () => T): T {
  return context.run(id, fn);
}

/** The request id of the work in progress, or null outside a request. */
export function currentRequestId(): string | null {
  return context.getStore() ?? null;
}
