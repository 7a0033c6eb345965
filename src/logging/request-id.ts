/** A caller's X-Request-Id is kept only when it is short plain text: it is echoed back, logged and journaled. */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the caller's X-Request-Id when acceptable, else a fresh one. */
export function requestIdFrom(header: string | string[] | undefined, fresh: () => string): string {
  return typeof header === 'string' && ACCEPTED.test(header) ? header : fresh();
}
