/**
 * The liveness check, the one API route open without a credential: monitors, systemd and container probes call it with
 * none. It says only that the service answers (`{status: "ok"}`); the Host and Origin checks still apply to it, and a
 * credential sent with it is still checked. Everything with detail (GET /api/v1/ready) needs the token.
 */
export const LIVENESS_PATH = '/api/v1/health';

/** Whether a request is for the liveness check: a GET or HEAD routed to LIVENESS_PATH (the query aside). */
export function isLivenessCheck(method: string, routeUrl: string | undefined): boolean {
  return (method === 'GET' || method === 'HEAD') && routeUrl === LIVENESS_PATH;
}
