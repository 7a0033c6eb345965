import { BehaviorSubject } from 'rxjs';
import { LeaseState } from '../../src/cluster/lease.rules';
import { SupervisorLease } from '../../src/cluster/supervisor-lease.port';

/** A lease the test hands out: its state is what the test says. */
export function fixedLease(holder: string, state: LeaseState): SupervisorLease {
  const changes = new BehaviorSubject<LeaseState>(state);
  return { holder, state: () => changes.value, changes$: changes.asObservable(), start: async () => undefined, stop: async () => undefined };
}
