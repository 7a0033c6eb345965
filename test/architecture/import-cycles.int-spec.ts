import { join } from 'node:path';
import madge from 'madge';

const ROOT = join(__dirname, '..', '..');
/** Type-only imports count: a reader follows them as well. */
const graph = (paths: string[]) =>
  madge(paths, {
    fileExtensions: ['ts'],
    tsConfig: join(ROOT, 'tsconfig.json'),
    detectiveOptions: { ts: { skipTypeImports: false }, es6: { skipTypeImports: false } },
  });

const FEATURES = ['sessions', 'supervision', 'main-brain', 'profiles', 'workflows', 'mcp', 'auth'];
const BOTTOM = ['bus', 'journal', 'common'];

describe('dependencies point one way (madge over src/)', () => {
  let deps: Record<string, string[]>;
  let cycles: string[][];

  beforeAll(async () => {
    const src = await graph([join(ROOT, 'src')]);
    deps = src.obj();
    cycles = src.circular();
  });

  it('given the fixture of two files importing each other only as types, then the check reports that cycle', async () => {
    const fixture = await graph([join(ROOT, 'test', 'fixtures', 'import-cycle')]);
    expect(fixture.circular()).toEqual([['driver.ts', 'round.ts']]);
  });

  it('has no import cycle', () => {
    // Sanity: the graph is the whole tree, not an empty or mis-rooted one.
    expect(Object.keys(deps)).toEqual(expect.arrayContaining(['bus/domain-event.ts', 'sessions/session.registry.ts', 'supervision/supervision.service.ts']));
    expect(cycles).toEqual([]);
  });

  it('keeps the bottom layers (bus, journal, common) free of imports from any feature folder', () => {
    const upward = Object.entries(deps)
      .filter(([file]) => BOTTOM.some((dir) => file.startsWith(`${dir}/`)))
      .flatMap(([file, imports]) => imports.filter((d) => FEATURES.some((f) => d.startsWith(`${f}/`))).map((d) => `${file} -> ${d}`));
    expect(upward).toEqual([]);
  });
});
