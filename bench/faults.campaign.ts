/**
 * The fault campaign (bench/README.md, The fault campaign): faults drawn from a seed it prints, injected into real
 * service processes supervising about ten workers, the invariants checked after each. Stops by itself; exits 1 on any
 * violation.
 *
 *   npm run test:faults [-- --mode pg|level --faults 40 --seed 1234 --logs /tmp/faults-logs --only level:disk-full,level:stop]
 *   (or FAULTS_MODE, FAULTS_COUNT, FAULTS_SEED, FAULTS_LOG_DIR: where each node process's output and the
 *   journal last read are kept; FAULTS_ONLY: only these kinds of fault)
 */
import { CampaignMode, runCampaign } from '../test/faults/fault-campaign';

const arg = (name: string, env: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : process.env[env];
};

async function main(): Promise<void> {
  const mode = (arg('mode', 'FAULTS_MODE') ?? 'pg') as CampaignMode;
  if (mode !== 'pg' && mode !== 'level') throw new Error(`--mode must be pg or level, got ${mode}`);
  const faults = Number(arg('faults', 'FAULTS_COUNT') ?? 40);
  if (!Number.isInteger(faults) || faults < 1) throw new Error(`--faults must be a positive integer, got ${faults}`);
  const seedArg = arg('seed', 'FAULTS_SEED');
  const seed = seedArg === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(seedArg);
  if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${seedArg}`);
  const logDir = arg('logs', 'FAULTS_LOG_DIR');
  const only = arg('only', 'FAULTS_ONLY')?.split(',');
  const result = await runCampaign({ mode, seed, faults, logDir, only });
  for (const v of result.violations) console.log(`violation ${v.invariant}: ${v.detail}`);
  console.log(`faults by kind: ${Object.entries(result.faultsByKind).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  process.exitCode = result.violations.length === 0 && result.faultsInjected === faults ? 0 : 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
