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
    /** The service's error code (`apply_drift`, …) when it named one. */
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export const authHeader = (value: string): Record<string, string> => ({ authorization: `Bearer ${value}` });

async function errorOf(res: Response): Promise<{ message: string; code: string | null }> {
  const body: unknown = await res.json().catch(() => null);
  const { message, code } = typeof body === 'object' && body !== null ? (body as { message?: unknown; code?: unknown }) : {};
  return { message: typeof message === 'string' ? message : `${res.status} ${res.statusText}`, code: typeof code === 'string' ? code : null };
}

type Init = { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown };

/** A call to the service's API as the user; a refused token is forgotten, so the page asks for it again. */
async function send(path: string, init: Init): Promise<Response> {
  const current = token.value;
  if (current === null) throw new ApiError(401, 'no token');
  const res = await fetch(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { ...authHeader(current), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (res.status === 401) setToken(null);
  if (!res.ok) {
    const { message, code } = await errorOf(res);
    throw new ApiError(res.status, message, code);
  }
  return res;
}

/** A JSON answer; a 204 answers undefined. */
export async function api<T>(path: string, init: Init = {}): Promise<T> {
  const res = await send(path, init);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** A text answer (a profile's YAML export). */
export async function apiText(path: string, init: Init = {}): Promise<string> {
  return (await send(path, init)).text();
}

export type TokenCheck = { ok: true } | { ok: false; message: string };

/** Whether a pasted token is the user's: the main brain's or a worker's token is refused here too. */
export async function checkToken(candidate: string): Promise<TokenCheck> {
  const res = await fetch('/api/v1/auth/whoami', { headers: authHeader(candidate) });
  if (res.status === 401) return { ok: false, message: 'That token was refused.' };
  if (!res.ok) return { ok: false, message: (await errorOf(res)).message };
  const body = (await res.json()) as { principal?: { kind?: string } };
  return body.principal?.kind === 'user' ? { ok: true } : { ok: false, message: "That is not the user's token (it belongs to the main brain or a worker)." };
}
