import { Controller, Get, Inject } from '@nestjs/common';
import { SUPERVISOR_LEASE, SupervisorLease } from '../cluster/supervisor-lease.port';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { SandboxReadiness, sandboxAvailability, sandboxReadiness } from '../sandbox/sandbox-availability';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';

/** The main brain as this node sees it. */
export interface BrainReadiness {
  /** Where rounds go: agent (the hosted brain), stream, command or webhook. */
  driver: string;
  /** Whether Brainstem hosts the brain (driver agent), rather than a brain the user brings. */
  hosted: boolean;
  /** The hosted brain's runtime (claude-code, codex, …); null for a brain the user brings. */
  runtime: string | null;
  /**
   * The hosted brain: whether it runs on this node now (this node holds the supervisor lease and started it). A brain
   * the user brings: null, as Brainstem holds no connection to it (stream rounds are events its client follows;
   * command and webhook are reached at each round).
   */
  connected: boolean | null;
}

/** Provided by the main brain's module. */
export const BRAIN_READINESS = Symbol('BRAIN_READINESS');
export interface BrainReadinessSource {
  brain(): BrainReadiness;
}

/** GET /api/v1/ready: what this node stands on. */
export interface Readiness {
  journal: { head_seq: number; open: boolean };
  /** This node's hold on the supervisor lease: its id, leader or follower, and the term it knows. */
  lease: { node: string; role: 'leader' | 'follower'; term: number };
  brain: BrainReadiness;
  /** The OS sandbox of workers on this node: its mode, whether workers are sandboxed, what the machine lacks. */
  sandbox: SandboxReadiness;
}

export function readiness(journal: Journal, lease: SupervisorLease, brain: BrainReadinessSource, sandbox: SandboxReadiness): Readiness {
  const held = lease.state();
  return {
    journal: { head_seq: journal.head().seq, open: journal.isOpen() },
    lease: { node: lease.holder, role: held.role, term: held.term },
    brain: brain.brain(),
    sandbox,
  };
}

/** The readiness report, the user's alone (the open liveness check is GET /api/v1/health). */
@Controller('ready')
export class ReadinessController {
  constructor(
    @Inject(JOURNAL) private readonly journal: Journal,
    @Inject(SUPERVISOR_LEASE) private readonly lease: SupervisorLease,
    @Inject(BRAIN_READINESS) private readonly brain: BrainReadinessSource,
    @Inject(CONFIG) private readonly config: BrainstemConfig,
  ) {}

  @Get()
  ready(): Readiness {
    return readiness(this.journal, this.lease, this.brain, sandboxReadiness(this.config.sandbox.mode, sandboxAvailability()));
  }
}
