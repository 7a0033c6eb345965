/** A running service as the benches call it: its base URL and the user's credential. */
export interface ApiTarget {
  url: string;
  auth: { authorization: string };
}

/**
 * One JSON call to /api/v1 with the user's token. An answer other than `expect` stops the bench, naming the call, the
 * status and the body: a figure measured on refusals would be a figure of refusals.
 */
export async function callApi<T>(svc: ApiTarget, method: string, path: string, expect: number, body?: object): Promise<T> {
  const res = await fetch(`${svc.url}/api/v1${path}`, {
    method,
    headers: body ? { ...svc.auth, 'content-type': 'application/json' } : svc.auth,
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path} answered ${res.status}, expected ${expect}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}
