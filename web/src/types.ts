/**
 * The service's shapes the page reads, imported from the service itself (types only: esbuild erases them, and the
 * dashboard build refuses a bundle that takes any of the service's code: src/dashboard/dashboard.build.ts).
 */
import type { SessionState } from '../../src/sessions/session.events';

export type { JsonObject, Pending, PermissionRequest, SessionState } from '../../src/sessions/session.events';
export type { SessionStatus as Session } from '../../src/sessions/session.status';
export type { JournalEvent, VerifyReport } from '../../src/journal/journal.port';
export type { EventsPage } from '../../src/journal/audit';
export type { AutonomousView as Autonomous } from '../../src/supervision/supervision.service';
export type { RoundView } from '../../src/supervision/round.view';
export type { ChatMessage } from '../../src/main-brain/chat.service';
export type { BrainPresence } from '../../src/main-brain/brain-presence';
export type { Confirmation } from '../../src/main-brain/confirmation.decider';
export type { ChannelView, EffectiveRules } from '../../src/notifications/notifications.service';
export type { PushDeviceView } from '../../src/notifications/push-devices.service';
export type { NotificationKind } from '../../src/config/notify-config';
export type { UsageReport } from '../../src/usage/usage.service';
export type { HooksChange, Installation as HooksInstall } from '../../src/external/claude-hooks.installer';

export const NEEDS_ATTENTION: readonly SessionState[] = ['pending_handling', 'pending_authorization', 'pending_decision'];
export type { WorktreeDiff, PatchPage, DiffFile } from '../../src/worktrees/diff-page';
export type { SessionWarning } from '../../src/sessions/session-warnings';
export type { ClusterView, NodeView } from '../../src/nodes/cluster-view';
