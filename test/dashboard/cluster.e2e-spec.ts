import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { TestApp, startTestApp } from '../support/test-app';
import { WORKERS, WorkerReaper } from '../support/workers';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const describeBoth: jest.Describe = describeInBrowser === describe ? pgDescribe('dashboard cluster.e2e-spec') : describe.skip;

/** The cluster view in Chromium: the page served by node a, node b beside it on one PostgreSQL journal. */
describeBoth('the cluster view of the dashboard, in Chromium', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let b: TestApp | null = null;
  const reaper = new WorkerReaper();
  const nodeEnv = (id: string) => ({ BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_NODE_ID: id, BRAINSTEM_NODE_LEASE_TTL_S: '4' });
  // Declared before the harness, so the database is there when node a starts.
  beforeAll(async () => {
    cluster = await startPgCluster();
    db = await cluster.createDatabase();
  });
  const harness = dashboardHarness({ env: () => nodeEnv('a') });
  afterAll(async () => {
    reaper.killAll();
    await b?.close();
  });

  const worker = async (app: TestApp): Promise<Json> => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json();
  };

  it('Given nodes a and b, Then the view lists both up, a holding the lease in term 1, the sessions of each and their lag; When b stops, Then it shows stopped', async () => {
    const { t, page } = harness;
    b = await startTestApp(nodeEnv('b'), { listen: true });
    await worker(t);
    await worker(t);
    await worker(b);
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Cluster' }).click();
    await page.getByRole('heading', { name: 'Cluster' }).waitFor();
    await page.locator('[data-lease]').getByText(/^Held by node a in term 1, for \d+\.\d s more unless renewed\.$/).waitFor();
    const nodes = page.getByRole('table', { name: 'Nodes' });
    const row = (id: string) => nodes.locator(`[data-node="${id}"]`);
    // b's sessions reach a through the journal; its heartbeat brings its address and its seq.
    await row('b').getByRole('cell', { name: '1 / 1' }).waitFor();
    await row('a').getByRole('cell', { name: '2 / 2' }).waitFor();
    await row('b').getByRole('cell', { name: 'caught up' }).waitFor();
    expect(await row('a').locator('td').allTextContents()).toEqual(['a (this node)', 'up', 'holder, term 1', t.url, 'now (this node)', expect.stringMatching(/^\d+$/), 'caught up', '2 / 2']);
    expect(await row('b').locator('td').nth(1).textContent()).toBe('up');
    expect(await row('b').locator('td').nth(3).textContent()).toBe(b.url);
    await screenshot(page, 'cluster');

    await b.close();
    b = null;
    await row('b').getByRole('cell', { name: 'stopped', exact: true }).waitFor();
    expect(await row('b').locator('td').nth(2).textContent()).toBe('');
  }, 90000);

  afterAll(async () => {
    await db?.drop();
    cluster?.stop();
  });
});
