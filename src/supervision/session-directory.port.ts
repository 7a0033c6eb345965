/** What supervision needs to know about sessions; the sessions module provides it. */
export interface SessionView {
  id: string;
  alias: string;
  state: string;
  /** Epoch ms when the session entered its state. */
  state_since: number;
  excluded: boolean;
  /** The worker has not exited. */
  active: boolean;
  /** The worker survived a service restart (alive with the same start time, or resumable). */
  recoverable: boolean;
}

export interface SessionDirectory {
  list(): SessionView[];
  /** One session by cs_ id; undefined when unknown. */
  get(id: string): SessionView | undefined;
  setExcluded(id: string, excluded: boolean, actor: string): Promise<void>;
}

export const SESSION_DIRECTORY = Symbol('SessionDirectory');
