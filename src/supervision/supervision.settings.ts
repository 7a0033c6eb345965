import { NodeDirectory, soleNode } from '../cluster/node-directory.port';
import { SupervisorLease, heldLease } from '../cluster/supervisor-lease.port';
import { WatchdogConfig } from './stall-watchdog';
import { ToolScopeMode } from './supervision-scope';

export interface SupervisionSettings {
  debounce_ms: number;
  restore_ttl_s: number;
  round_timeout_s: number;
  /** The stall watchdog; absent means off (unit tests that do not exercise it). */
  watchdog?: WatchdogConfig;
  /** How long an ended round stays in memory; absent keeps every round. */
  retention_s?: number;
}

export interface EnableRequest {
  task_hint?: string;
  max_turns?: number;
  scope_mode?: ToolScopeMode;
  scope_session_ids?: string[];
}

/** The nodes sharing the journal, and this node's hold on the supervisor lease. */
export interface SupervisionCluster {
  lease: SupervisorLease;
  nodes: NodeDirectory;
}

/** A node alone on its journal: it always holds the lease. */
export const soleSupervision = (self = 'local'): SupervisionCluster => ({ lease: heldLease(self), nodes: soleNode(self) });
