import { signal } from '@preact/signals';

const TOKEN_KEY = 'brainstem.token';

/** The user's API token: asked once, kept for this tab only (sessionStorage), never in a URL or a cookie. */
export const token = signal<string | null>(sessionStorage.getItem(TOKEN_KEY));

export function setToken(value: string | null): void {
  if (value === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, value);
  token.value = value;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const authHeader = (value: string): Record<string, string> => ({ authorization: `Bearer ${value}` });

async function messageOf(res: Response): Promise<string> {
  const body: unknown = await res.json().catch(() => null);
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : `${res.status} ${res.statusText}`;
}

/** A call to the service's API as the user; a refused token is forgotten, so the page asks for it again. */
export async function api<T>(path: string, init: { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown } = {}): Promise<T> {
  const current = token.value;
  if (current === null) throw new ApiError(401, 'no token');
  const res = await fetch(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { ...authHeader(current), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (res.status === 401) setToken(null);
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
  return (await res.json()) as T;
}

export type TokenCheck = { ok: true } | { ok: false; message: string };

/** Whether a pasted token is the user's: the main brain's or a worker's token is refused here too. */
export async function checkToken(candidate: string): Promise<TokenCheck> {
  const res = await fetch('/api/v1/auth/whoami', { headers: authHeader(candidate) });
  if (res.status === 401) return { ok: false, message: 'That token was refused.' };
  if (!res.ok) return { ok: false, message: await messageOf(res) };
  const body = (await res.json()) as { principal?: { kind?: string } };
  return body.principal?.kind === 'user' ? { ok: true } : { ok: false, message: "That is not the user's token (it belongs to the main brain or a worker)." };
}
