import { SnapshotFrom, assign, initialTransition, setup } from 'xstate';
import { INERT_CONTEXT, SessionContext, contextFor } from './session.context';
import { SessionEvent, SessionInput, SessionState } from './session.events';
import { ACTIONS, ActionName, GUARDS, GuardName, STATES, selected, step } from './session.transitions';

export type { SessionContext } from './session.context';

type Args = { context: SessionContext; event: SessionEvent };
const actions = Object.fromEntries(
  Object.entries(ACTIONS).map(([name, update]) => [name, assign(({ context, event }: Args) => update(context, event))]),
) as { [K in ActionName]: ReturnType<typeof assign<SessionContext, SessionEvent, undefined, SessionEvent, never>> };
const guards = Object.fromEntries(Object.entries(GUARDS).map(([name, test]) => [name, ({ context, event }: Args) => test(context, event)])) as {
  [K in GuardName]: (args: Args) => boolean;
};

/**
 * A coding session as a pure state machine: how each event moves the state, built from the transitions of
 * session.transitions.ts. The rules on commands are in session.decider.ts; the registry journals every accepted event
 * before adopting the next snapshot, and replay folds the journal through the same transitions.
 * No I/O, no timers, no clock: every event carries its own `at`.
 */
export const sessionMachine = setup({
  types: { context: {} as SessionContext, events: {} as SessionEvent, input: {} as SessionInput },
  guards,
  actions,
}).createMachine({
  id: 'session',
  // xstate's transition() builds a throwaway actor without input on every call; a placeholder, never adopted, keeps
  // that from throwing a TypeError each time (caught by xstate, it made every step several times dearer).
  context: ({ input }) => (input === undefined ? INERT_CONTEXT : contextFor(input)),
  initial: 'starting',
  states: STATES,
});

export type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;

export function createSession(input: SessionInput): SessionSnapshot {
  return initialTransition(sessionMachine, input)[0];
}

export function stateOf(snapshot: SessionSnapshot): SessionState {
  return snapshot.value as SessionState;
}

/** When what the session waits on began: entering its state, or a later change of what it waits on within it. */
export function attentionSince(c: Pick<SessionContext, 'state_since' | 'waiting_since'>): number {
  return Math.max(c.state_since, c.waiting_since);
}

/** Whether the machine takes the event in this snapshot (what snapshot.can answers), without building an actor. */
export function accepts(snapshot: SessionSnapshot, event: SessionEvent): boolean {
  return selected(stateOf(snapshot), snapshot.context, event) !== null;
}

/** The state the event leads to, or null if the machine does not take it: nextSnapshot's state, without its context. */
export function nextState(snapshot: SessionSnapshot, event: SessionEvent): SessionState | null {
  const state = stateOf(snapshot);
  const t = selected(state, snapshot.context, event);
  return t === null ? null : (t.target ?? state);
}

/**
 * The next snapshot if the machine accepts the event, else null. Taken by step() from the transitions the machine is
 * built from, as xstate's pure transition() would take it (session.machine.spec.ts holds the two equal over every
 * state and event) but without the throwaway actor transition() builds each time: that made every command several
 * times dearer (bench:sessions). A snapshot in the same state is the previous one with its new context; another
 * state's is resolved by the machine.
 */
export function nextSnapshot(snapshot: SessionSnapshot, event: SessionEvent): SessionSnapshot | null {
  const state = stateOf(snapshot);
  const next = step(state, snapshot.context, event);
  if (next === null) return null;
  if (next.state === state) return { ...snapshot, context: next.context };
  return sessionMachine.resolveState({ value: next.state, context: next.context });
}
