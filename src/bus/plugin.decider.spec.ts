import { decide, evolve } from './plugin.decider';

describe('plugin decide/evolve', () => {
  it('Given a plugin loaded, Then plugin.loaded is journaled with its name and path', () => {
    expect(decide({ type: 'report_loaded', name: 'recorder', path: '/p/recorder.js' })).toEqual({ events: [{ type: 'plugin.loaded', data: { name: 'recorder', path: '/p/recorder.js' } }] });
  });

  it('Given a plugin failed, Then plugin.failed is journaled with its error, and the state stays empty', () => {
    const d = decide({ type: 'report_failed', name: 'exploder', path: '/p/exploder.js', error: 'kaboom' });
    expect(d).toEqual({ events: [{ type: 'plugin.failed', data: { name: 'exploder', path: '/p/exploder.js', error: 'kaboom' } }] });
    expect(evolve(null)).toBeNull();
  });
});
