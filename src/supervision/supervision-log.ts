/** Where supervision's classes report what nobody waits for (a timeout, a scan, a driver's end of a round, a takeover). */
export interface SupervisionLog {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** An error's message, for a log line. */
export const reasonOf = (e: unknown): string => (e as Error)?.message ?? String(e);
