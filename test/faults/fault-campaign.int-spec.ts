import { pgDescribe } from '../support/pg-cluster';
import { runCampaign } from './fault-campaign';

const describePg = pgDescribe('fault-campaign.int-spec');
/** The full disk is a tmpfs the campaign mounts: that takes root. */
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn('fault-campaign.int-spec: not root, so no tmpfs can be mounted for the full disk: the LevelDB campaign is skipped');

/**
 * The short fault campaign CI runs (npm run test:faults runs the long one): a fixed seed and a bounded count of faults,
 * each one really injected, the invariants checked after each, and none violated.
 */
describePg('the fault campaign, short', () => {
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  afterEach(() => {
    // What the campaign printed (the seed, each fault, each check) is the evidence of a failure.
    if (lines.length) console.log(lines.splice(0).join('\n'));
  });

  it('given three nodes on PostgreSQL supervising 10 workers, when 8 faults from seed 4711 are injected (one of each kind: kills and stops of the leader and of a follower, at a round\'s start too, a kill during a merge, a PostgreSQL restart), then no invariant is violated', async () => {
    const result = await runCampaign({ mode: 'pg', seed: 4711, faults: 8, log });
    expect(result.faultsInjected).toBe(8);
    expect(result.invariantsChecked).toBeGreaterThanOrEqual(8 * 10);
    expect(result.acknowledged).toBeGreaterThan(0);
    expect(result.rounds).toBeGreaterThan(0);
    expect(result.violations).toEqual([]);
  }, 170_000);

  (asRoot ? it : it.skip)('given one node on LevelDB supervising 10 workers, when 5 faults from seed 4712 are injected (one of each kind: a kill, a kill at a round\'s start, a stop, a full disk, a kill during a merge), then no invariant is violated', async () => {
    const result = await runCampaign({ mode: 'level', seed: 4712, faults: 5, log });
    expect(result.faultsInjected).toBe(5);
    expect(result.invariantsChecked).toBeGreaterThanOrEqual(5 * 10);
    expect(result.acknowledged).toBeGreaterThan(0);
    expect(result.rounds).toBeGreaterThan(0);
    expect(result.violations).toEqual([]);
  }, 170_000);
});
