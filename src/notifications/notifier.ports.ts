import { SessionInfo } from './notification-text';

/** What the notifier asks of the rest of the service; the module wires these to the sessions, supervision and the lease. */
export interface NotifierPorts {
  /** A session's alias, title and runtime; null for one that is not known. */
  sessionInfo(sessionId: string): SessionInfo | null;
  /** Whether the main brain handles this session's things now: supervision is on and the session is supervised. */
  handledByBrain(sessionId: string): boolean;
  /** Only the supervisor lease's holder sends: on a shared journal, one node notifies. */
  isLeader(): boolean;
  /** The base URL of the links (BRAINSTEM_PUBLIC_URL, else the service's URL). */
  publicUrl(): string;
  /** An action link's credential for a capability id (src/auth/credentials.ts). */
  actionToken(capabilityId: string): string;
  now(): number;
  /** The service's local minute of the day at a time (quiet hours are local). */
  minuteOfDay(ms: number): number;
  newId(): string;
}

/** What an action link acts through: the same calls the dashboard's buttons make. */
export interface ActionPorts {
  permissionPending(sessionId: string, requestId: string): boolean;
  confirmationPending(confirmationId: string): boolean;
  resolvePermission(sessionId: string, decision: 'allow' | 'deny', reason: string | null, requestId: string): Promise<unknown>;
  confirm(confirmationId: string): Promise<unknown>;
  refuse(confirmationId: string, reason: string | null): Promise<unknown>;
}

export const localMinuteOfDay = (ms: number): number => {
  const d = new Date(ms);
  return d.getHours() * 60 + d.getMinutes();
};
