import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { EventBus } from '../../src/bus/event-bus';
import { PluginHost } from '../../src/bus/plugin-host';
import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal } from '../../src/journal/journal.factory';
import { CapturedLogger } from '../support/captured-logger';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { testConfig } from '../support/test-config';

const describePg = pgDescribe('plugins-follow.int-spec');
const fixture = (f: string) => resolve(__dirname, '../fixtures/plugins', f);

describePg('plugin reports of two nodes sharing a journal, in process', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let logs: CapturedLogger;
  const journals: EventJournal[] = [];
  const hosts: PluginHost[] = [];
  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    logs = CapturedLogger.capture();
    db = await cluster.createDatabase();
    await (await openPgJournal(db.url)).close();
  });
  afterEach(async () => {
    // Closed last first: each host restores the RxJS error handler it found.
    for (const host of hosts.splice(0).reverse()) host.close();
    for (const j of journals.splice(0)) await j.close();
    await db.drop();
    logs.release();
  });

  /** A node: its journal on the shared database, and its plugin host. */
  const node = async () => {
    const journal = await openPgJournal(db.url, { follow: true });
    journals.push(journal);
    const host = new PluginHost(new EventBus(journal), journal, testConfig(), new Logger('plugins'));
    hosts.push(host);
    return { journal, host };
  };

  it('Given two nodes journaling what their plugins did on stream plugins, When they load plugins at once and one loads more after, Then every report is appended, at the version the other node left', async () => {
    const a = await node();
    const b = await node();
    // Both at once: they race on the stream; a loser catches up with the winner's report and appends after it.
    await Promise.all([
      a.host.loadAll([fixture('recorder.plugin.js'), fixture('failing-register.plugin.js')], __dirname),
      b.host.loadAll([fixture('failing-register.plugin.js'), fixture('recorder.plugin.js')], __dirname),
    ]);
    // Then a loads one more: the stream moved past a's own last report, by b's.
    await a.host.loadAll([fixture('not-a-plugin.js')], __dirname);

    const stored = await a.journal.readStream('plugins');
    expect(stored.map((e) => e.version)).toEqual([1, 2, 3, 4, 5]);
    const reports = stored.map((e) => `${e.type} ${(e.data as { name: string }).name}`);
    expect([...reports.slice(0, 4)].sort()).toEqual(['plugin.failed broken-at-start', 'plugin.failed broken-at-start', 'plugin.loaded recorder', 'plugin.loaded recorder']);
    expect(reports[4]).toBe(`plugin.failed ${fixture('not-a-plugin.js')}`);
    expect(logs.messages('error', 'plugins').filter((m) => m.startsWith('could not journal'))).toEqual([]);
  });
});
