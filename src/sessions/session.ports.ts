import { randomBytes } from 'node:crypto';
import { SERVICE_HOST, ServiceHost } from '../config/service-host';

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

/**
 * What the service was started in, as the sessions read it (see ServiceHost): the environment workers inherit (without
 * credentials), the home `~/` means in a profile's rules when a worker's env sets none, the directory relative lookups
 * start from.
 */
export type SessionHost = ServiceHost;

/** How a worker reaches the service: its URL (known once the service listens) and the worker's own credential. */
export interface WorkerEndpoint {
  url(): string;
  token(sessionId: string): string;
}

/** The sessions' name for SERVICE_HOST: one value, provided by the app's composition. */
export const SESSION_HOST = SERVICE_HOST;
export const WORKER_ENDPOINT = Symbol('WorkerEndpoint');
