import { resolve } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { Logger } from '@nestjs/common';
import { EventBus } from '../../src/bus/event-bus';
import { PluginHost } from '../../src/bus/plugin-host';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';

const fixture = (f: string) => resolve(__dirname, '../fixtures/plugins', f);

describe('plugins', () => {
  let journal: Journal;
  const recorder = require(fixture('recorder.plugin.js')) as { seen: number[] };
  const exploder = require(fixture('exploding-subscriber.plugin.js')) as { seen: number[] };
  const follower = require(fixture('journal-subscriber.plugin.js')) as { seen: number[] };

  const t = useTestApp({
    BRAINSTEM_PLUGINS: ['recorder.plugin.js', 'exploding-subscriber.plugin.js', 'journal-subscriber.plugin.js', 'failing-register.plugin.js', 'not-a-plugin.js']
      .map(fixture)
      .join(','),
  });
  beforeAll(() => {
    journal = t.app.get<Journal>(JOURNAL);
  });

  const pluginEvents = async () => (await journal.readStream('plugins')).map((e) => [e.type, (e.data as { name: string }).name]);

  it('given plugins at start, loads the good ones and journals the failures of the bad ones', async () => {
    const events = await pluginEvents();
    expect(events).toEqual(
      expect.arrayContaining([
        ['plugin.loaded', 'recorder'],
        ['plugin.loaded', 'exploder'],
        ['plugin.loaded', 'journal-follower'],
        ['plugin.failed', 'broken-at-start'],
        ['plugin.failed', fixture('not-a-plugin.js')],
      ]),
    );
    expect(t.app.get(PluginHost).loaded.map((p) => [p.name, p.failed])).toEqual([
      ['recorder', false],
      ['exploder', false],
      ['journal-follower', false],
      ['broken-at-start', true],
      [fixture('not-a-plugin.js'), true],
    ]);
  });

  it('when a plugin throws in a subscriber, it alone is dropped and the service keeps running', async () => {
    const first = await journal.append('demo', [{ type: 'test.before' }]);
    const boom = await journal.append('demo', [{ type: 'test.boom' }]);
    await waitFor(async () => (await pluginEvents()).some(([type, name]) => type === 'plugin.failed' && name === 'exploder'), {
      what: 'plugin.failed for exploder',
    });
    const after = await journal.append('demo', [{ type: 'test.after' }]);
    await waitFor(() => recorder.seen.includes(after.events[0].seq), { what: 'recorder to see test.after' });

    expect(recorder.seen).toEqual(expect.arrayContaining([first.events[0].seq, boom.events[0].seq, after.events[0].seq]));
    expect(exploder.seen).toContain(boom.events[0].seq);
    expect(exploder.seen).not.toContain(after.events[0].seq);
    const failed = (await journal.readStream('plugins')).find((e) => e.type === 'plugin.failed' && (e.data as { name: string }).name === 'exploder');
    expect((failed?.data as { error: string }).error).toBe('kaboom in a subscriber');
    const health = await t.inject({ method: 'GET', url: '/api/v1/health' });
    expect(health.statusCode).toBe(200);
  });

  it('when a plugin throws in a journal subscription of its own, it is dropped and that subscription ends too', async () => {
    // test.boom was appended by the test above: the follower saw it too
    await waitFor(async () => (await pluginEvents()).some(([type, name]) => type === 'plugin.failed' && name === 'journal-follower'), {
      what: 'plugin.failed for journal-follower',
    });
    const failed = (await journal.readStream('plugins')).find((e) => e.type === 'plugin.failed' && (e.data as { name: string }).name === 'journal-follower');
    expect((failed?.data as { error: string }).error).toBe('kaboom in a journal subscriber');
    const later = await journal.append('demo', [{ type: 'test.later' }]);
    await waitFor(() => recorder.seen.includes(later.events[0].seq), { what: 'recorder to see test.later' });
    expect(follower.seen).not.toContain(later.events[0].seq);
    expect(t.app.get(PluginHost).loaded.find((p) => p.name === 'journal-follower')?.failed).toBe(true);
  });

  it('fails a plugin whose register() never settles, after the register timeout, and goes on', async () => {
    const host = new PluginHost(t.app.get(EventBus), journal, t.config, new Logger('plugins-test'), 200);
    try {
      await host.loadAll([fixture('never-registers.plugin.js')], __dirname);
      expect(host.loaded).toEqual([{ name: 'never-registers', path: fixture('never-registers.plugin.js'), failed: true }]);
      const failed = (await journal.readStream('plugins')).find((e) => e.type === 'plugin.failed' && (e.data as { name: string }).name === 'never-registers');
      expect((failed?.data as { error: string }).error).toBe('register() did not finish within 200 ms');
    } finally {
      host.close();
    }
  });
});
