/** The service's shapes the page reads (src/sessions/session.status.ts and friends). */
export type SessionState = 'starting' | 'working' | 'pending_handling' | 'pending_authorization' | 'pending_decision' | 'exited';

export type JsonObject = { [key: string]: unknown };

export interface PermissionRequest {
  request_id: string;
  tool: string;
  input: JsonObject;
}

export type Pending = { kind: 'question'; question: string } | ({ kind: 'permission' } & PermissionRequest) | { kind: 'blocked'; reason: string };

export interface Session {
  id: string;
  alias: string;
  title: string;
  runtime: string;
  profile_id: string | null;
  cwd: string;
  state: SessionState;
  state_label: string | null;
  state_since: string;
  excluded: boolean;
  supervised: boolean;
  pending: Pending | null;
  queued_permissions: PermissionRequest[];
  created_at: string;
  updated_at: string;
}

export interface JournalEvent {
  seq: number;
  stream: string;
  type: string;
  at: string;
  data: unknown;
}

export interface Autonomous {
  enabled: boolean;
  turns_used: number;
  max_turns: number;
  task_hint: string | null;
  closed_reason: string | null;
  round_in_flight: string | null;
}

export const NEEDS_ATTENTION: readonly SessionState[] = ['pending_handling', 'pending_authorization', 'pending_decision'];
