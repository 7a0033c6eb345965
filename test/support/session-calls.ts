import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { TestApp } from './test-app';
import { waitFor } from './wait-for';

export type SessionBody = { id: string; alias: string; state: string; pid: number | null; exit_code: number | null };

/** Coding-session calls on a test app that is started later (in beforeAll): `app` is read at each call. */
export function sessionCalls(app: () => TestApp) {
  const call = async (method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: SessionBody }> => {
    const res = await app().inject({ method, url: `/api/v1/coding-sessions${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  };
  /** The results of the session's turn ends, from its journal stream. */
  const results = async (id: string): Promise<Array<string | null>> =>
    (await app().app.get<Journal>(JOURNAL).readStream(`session-${id}`))
      .filter((e) => e.type === 'session.turn_ended')
      .map((e) => (e.data as { result: string | null }).result);
  const turnsEnded = (id: string, n: number, timeoutMs = 90000) =>
    waitFor(async () => ((await results(id)).length >= n ? results(id) : undefined), { timeoutMs, what: `${n} turn end(s)` });
  /** The session's status once it is in `state`. */
  const untilState = (id: string, state: string, timeoutMs = 90000) =>
    waitFor(async () => {
      const { body } = await call('GET', `/${id}`);
      return body.state === state ? body : undefined;
    }, { timeoutMs, what: `session ${id} ${state}` });
  return { call, results, turnsEnded, untilState };
}
