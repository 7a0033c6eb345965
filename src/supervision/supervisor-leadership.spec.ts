import { BehaviorSubject } from 'rxjs';
import { SerialQueue } from '../common/serial-queue';
import { NodeDirectory, soleNode } from '../cluster/node-directory.port';
import { LeaseState } from '../cluster/lease.rules';
import { SupervisorLease } from '../cluster/supervisor-lease.port';
import { CommandStream, handleCommand } from '../journal/command-handler';
import { EventJournal } from '../journal/event-journal';
import { MemoryStorage } from '../journal/memory.storage';
import { SessionView } from './session-directory.port';
import { SupervisionJournalEvent, SupervisionState, decide, evolveStored, initialSupervisionState } from './supervision.decider';
import { WakeReason } from './supervision.machine';
import { LeadershipHost, SupervisorLeadership } from './supervisor-leadership';

const T0 = Date.parse('2026-11-26T09:00:00.000Z');
const TTL_S = 900;
const reason: WakeReason = { alias: 'w1', message: 'Which DB?', session_id: 'cs_1', state: 'pending_decision', trigger: 'ask_human' };

/** The lease as the test hands it out: a change is told, or (quietly) only what state() says, as the holder's own clock would. */
function testLease(first: LeaseState) {
  let now = first;
  const changes = new BehaviorSubject<LeaseState>(first);
  const lease: SupervisorLease = { holder: 'a', state: () => now, changes$: changes.asObservable(), start: async () => undefined, stop: async () => undefined };
  return {
    lease,
    change: (s: LeaseState) => {
      now = s;
      changes.next(s);
    },
    quietly: (s: LeaseState) => (now = s),
  };
}

const worker = (over: Partial<SessionView> = {}): SessionView => ({
  id: 'cs_1',
  alias: 'w1',
  state: 'pending_decision',
  state_since: T0,
  excluded: false,
  active: true,
  recoverable: true,
  last_result: null,
  waiting_on: null,
  attention_since: over.state_since ?? T0,
  ...over,
});

/**
 * Leadership over supervision's real rules: a journal in memory whose supervision stream already holds `history`
 * (journaled at T0), the state folded from it, and what the host was told, in order.
 */
async function harness(history: SupervisionJournalEvent[], lease: SupervisorLease, opts: { now?: number; sessions?: SessionView[]; nodes?: NodeDirectory; listeners?: number } = {}) {
  let clock = T0;
  const journal = await EventJournal.open(new MemoryStorage(), { now: () => clock });
  if (history.length) await journal.append('supervision', history);
  clock = opts.now ?? T0 + 60_000;
  let state: SupervisionState = initialSupervisionState();
  let version = 0;
  const stream: CommandStream<SupervisionState> = {
    name: 'supervision',
    current: () => ({ state, version }),
    adopt: (s, v) => {
      state = s;
      version = v;
    },
  };
  const told: unknown[] = [];
  const host: LeadershipHost = {
    catchUp: async () => {
      told.push('catchUp');
      for (const e of await journal.readStream('supervision', version + 1)) stream.adopt(evolveStored(state, e), e.version, [e]);
    },
    current: () => stream.current(),
    execute: (cmd) => handleCommand(journal, stream, (s) => decide(cmd, s), evolveStored, { fence: leadership.fence() }),
    resumed: (reasons, kept) => told.push(kept ? ['resumed', reasons, 'kept', kept.id] : ['resumed', reasons]),
    roundListeners: () => opts.listeners ?? 0,
    steppedDown: () => told.push('steppedDown'),
  };
  const log = { log: () => undefined, warn: () => undefined, error: (m: string) => told.push(['error', m]) };
  const sessions = opts.sessions ?? [worker()];
  const queue = new SerialQueue();
  const leadership: SupervisorLeadership = new SupervisorLeadership(
    { lease, nodes: opts.nodes ?? soleNode('a'), journal, sessions: { list: () => sessions }, restore_ttl_s: TTL_S, now: () => clock, queue, log },
    host,
  );
  const appended = async () => (await journal.readStream('supervision', history.length + 1)).map((e) => [e.type, e.data]);
  /** Once the takeovers queued so far have run. */
  const settled = () => queue.run(async () => undefined);
  return { leadership, told, appended, settled, leading: () => leadership.leading };
}

const on: SupervisionJournalEvent[] = [{ type: 'supervision.enabled', data: { started_by: 'user' } }];
const inRound: SupervisionJournalEvent[] = [...on, { type: 'round.started', data: { round: { id: 'rd_1', started_at: T0, deadline_at: T0 + 600_000, reasons: [reason] } } }];
const leader = (term: number): LeaseState => ({ role: 'leader', term, until: Infinity });
const follower = (term: number): LeaseState => ({ role: 'follower', holder: 'b', term });

describe('supervisor leadership', () => {
  describe('taking the lease at boot', () => {
    it('Given supervision on with a round in flight and a worker that survived, When the node boots holding the lease, Then it leads, the round ends interrupted, and its reasons wake the next round', async () => {
      const h = await harness(inRound, testLease(leader(1)).lease);
      await h.leadership.start();
      expect(h.leadership.isLeader()).toBe(true);
      expect(h.leadership.fence()).toEqual({ lease: 'supervisor', holder: 'a', term: 1 });
      expect(await h.appended()).toEqual([['round.interrupted', { round_id: 'rd_1', reasons: [reason], reason: 'restart' }]]);
      expect(h.told).toEqual(['catchUp', ['resumed', [reason]]]);
    });

    it('Given supervision on and idle, When the node boots holding the lease, Then nothing is journaled and rounds run from here', async () => {
      const h = await harness(on, testLease(leader(1)).lease);
      await h.leadership.start();
      expect(await h.appended()).toEqual([]);
      expect(h.told).toEqual(['catchUp', ['resumed', []]]);
    });

    it('Given supervision last seen as long ago as the TTL, When the node boots holding the lease, Then supervision closes as restore_expired and no round runs', async () => {
      const h = await harness(inRound, testLease(leader(1)).lease, { now: T0 + TTL_S * 1000 });
      await h.leadership.start();
      expect(await h.appended()).toEqual([
        ['round.interrupted', { round_id: 'rd_1', reasons: [reason], reason: 'supervision_closed' }],
        ['supervision.disabled', { reason: 'restore_expired' }],
      ]);
      expect(h.told).toEqual(['catchUp']);
    });

    it('Given no supervised worker survived, When the node boots holding the lease, Then supervision closes as no_recoverable_worker', async () => {
      const h = await harness(on, testLease(leader(1)).lease, { sessions: [worker({ recoverable: false }), worker({ id: 'cs_2', excluded: true })] });
      await h.leadership.start();
      expect(await h.appended()).toEqual([['supervision.disabled', { reason: 'no_recoverable_worker' }]]);
    });

    it('Given the last round was the last turn, When it is interrupted at boot, Then supervision closes as max_turns and no round runs', async () => {
      const history: SupervisionJournalEvent[] = [{ type: 'supervision.enabled', data: { started_by: 'user', max_turns: 1 } }, ...inRound.slice(1)];
      const h = await harness(history, testLease(leader(1)).lease);
      await h.leadership.start();
      expect((await h.appended()).map(([type]) => type)).toEqual(['round.interrupted', 'supervision.disabled']);
      expect(h.told).toEqual(['catchUp']);
    });

    it('Given supervision off, When the node boots holding the lease, Then it leads and restores nothing', async () => {
      const h = await harness([], testLease(leader(1)).lease);
      await h.leadership.start();
      expect(h.leadership.isLeader()).toBe(true);
      expect(h.told).toEqual(['catchUp']);
    });
  });

  describe('failover and losing the lease', () => {
    it('Given a follower, When the lease comes to it in a new term, Then it catches up first and leads in that term; When the lease goes, Then it steps down once', async () => {
      const l = testLease(follower(1));
      const h = await harness(inRound, l.lease);
      await h.leadership.start();
      expect([h.leadership.isLeader(), h.leadership.fence(), h.told]).toEqual([false, undefined, []]);
      l.change(leader(2));
      await h.settled();
      expect(h.leadership.fence()).toEqual({ lease: 'supervisor', holder: 'a', term: 2 });
      expect(await h.appended()).toEqual([['round.interrupted', { round_id: 'rd_1', reasons: [reason], reason: 'leader_lost' }]]);
      expect(h.told).toEqual(['catchUp', ['resumed', [reason]]]);
      l.change(follower(3));
      l.change(follower(3));
      expect([h.leadership.isLeader(), h.leadership.fence(), h.leading()]).toEqual([false, undefined, false]);
      expect(h.told.slice(2)).toEqual(['steppedDown']);
    });

    it('Given a term the lease moved on from before the node could take it, Then that term is not taken, and the next is', async () => {
      const l = testLease(follower(1));
      const h = await harness(on, l.lease);
      await h.leadership.start();
      l.change(leader(2));
      // Before the queued takeover runs, the holder's own view already says term 3.
      l.quietly(leader(3));
      l.change(leader(3));
      await h.settled();
      expect(h.leadership.fence()?.term).toBe(3);
      expect(h.told).toEqual(['catchUp', ['resumed', []]]);
    });

    /** A round node b started for the given driver; nodes c (and b) follow the rounds stream as `followers` says. */
    const streamRound = (driver: string): SupervisionJournalEvent[] => [
      ...on,
      { type: 'round.started', data: { round: { id: 'rd_1', started_at: T0, deadline_at: T0 + 600_000, reasons: [reason], node: 'b', term: 1, driver } } },
    ];
    const followersOn = (followers: Record<string, number>): NodeDirectory => ({ ...soleNode('a'), roundFollowers: () => new Map(Object.entries(followers)) });
    const takeOver = async (history: SupervisionJournalEvent[], nodes: NodeDirectory, listeners = 0) => {
      const l = testLease(follower(1));
      const h = await harness(history, l.lease, { nodes, listeners });
      await h.leadership.start();
      l.change(leader(2));
      await h.settled();
      return h;
    };

    it('Given a stream round of node b and a brain following the rounds stream on live node c, When a takes the lease, Then the round is kept in flight for that brain and nothing is journaled', async () => {
      const h = await takeOver(streamRound('stream'), followersOn({ c: 1 }));
      expect(await h.appended()).toEqual([]);
      expect(h.told).toEqual(['catchUp', ['resumed', [], 'kept', 'rd_1']]);
    });

    it('Given a stream round of node b and a brain following on a itself, When a takes the lease, Then the round is kept', async () => {
      const h = await takeOver(streamRound('stream'), followersOn({}), 1);
      expect(h.told).toEqual(['catchUp', ['resumed', [], 'kept', 'rd_1']]);
    });

    it('Given a stream round whose only follower was on b, the node that lost the lease, When a takes the lease, Then the round is interrupted as leader_lost and its reasons wake the next', async () => {
      const h = await takeOver(streamRound('stream'), followersOn({ b: 2 }));
      expect(await h.appended()).toEqual([['round.interrupted', { round_id: 'rd_1', reasons: [reason], reason: 'leader_lost' }]]);
      expect(h.told).toEqual(['catchUp', ['resumed', [reason]]]);
    });

    it('Given a round of a hosted brain on b, When a takes the lease with clients following the stream on c, Then the round is interrupted: its brain died with b', async () => {
      const h = await takeOver(streamRound('claude-code'), followersOn({ c: 1 }));
      expect(await h.appended()).toEqual([['round.interrupted', { round_id: 'rd_1', reasons: [reason], reason: 'leader_lost' }]]);
    });

    it('Given a leader whose own clock says its lease ran out before the change is told, Then it no longer counts as the leader', async () => {
      const l = testLease(leader(1));
      const h = await harness(on, l.lease);
      await h.leadership.start();
      l.quietly(follower(1));
      expect(h.leadership.isLeader()).toBe(false);
    });
  });
});
