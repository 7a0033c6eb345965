import { randomBytes } from 'node:crypto';

/** Time as an input: the machine never reads a clock, the service stamps events with this one. */
export interface Clock {
  now(): number;
}

export interface IdGenerator {
  /** `cs_` + a random suffix. */
  sessionId(): string;
  /** Ids for permission requests that a worker reports through a signal. */
  requestId(): string;
}

export const CLOCK = Symbol('Clock');
export const ID_GENERATOR = Symbol('IdGenerator');

export const systemClock: Clock = { now: () => Date.now() };

const suffix = (bytes: number): string => randomBytes(bytes).toString('base64url').replace(/[-_]/g, 'x').toLowerCase();

export const randomIds: IdGenerator = {
  sessionId: () => `cs_${suffix(12)}`,
  requestId: () => `perm_${suffix(9)}`,
};
