/**
 * Whether the worker can take a message now (an input to the deciders): its handle says, the state cannot (a restart
 * detaches it, a worker may close stdin). An external session's claude takes one only while its hook waits for it
 * (`not_waiting` otherwise).
 */
export type WorkerReach = 'ready' | 'detached' | 'stdin_closed' | 'not_waiting';
