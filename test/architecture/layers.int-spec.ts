import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, dependencyGraph } from './dependency-graph';

/**
 * The layers of src/, lowest first, each a list of top-level folders ('.' is the files directly in src/). A file may
 * import from its own folder and from any lower layer; from another folder of its own layer only where PEERS says so;
 * never from a higher layer. Type-only imports count.
 */
const LAYERS: ReadonlyArray<{ name: string; folders: readonly string[] }> = [
  { name: 'shared kernel', folders: ['common'] },
  { name: 'foundations', folders: ['config', 'journal'] },
  { name: 'event bus', folders: ['bus'] },
  { name: 'infrastructure', folders: ['cluster', 'logging', 'sandbox'] },
  { name: 'http platform', folders: ['http'] },
  { name: 'features', folders: ['auth', 'usage', 'worktrees', 'profiles', 'sessions', 'supervision', 'workflows', 'main-brain', 'mcp', 'notifications', 'dashboard', 'external', 'nodes'] },
  { name: 'composition', folders: ['.', 'cli'] },
];

/**
 * Which folder of a layer may import which other folder of the same layer; a folder not named imports no peer. It
 * must stay one-way (a spec below checks that). Auth is the lowest feature: every feature's routes name who may call
 * them. Usage (what workers and the brain spend, and the rules of budgets) is read by profiles and sessions, and depends on
 * no feature. Worktrees (git) knows nothing of sessions, which isolate their workers in them. Supervision watches
 * sessions; workflows run on both; the main brain and MCP drive everything below them.
 */
const PEERS: Readonly<Record<string, readonly string[]>> = {
  profiles: ['usage'],
  sessions: ['auth', 'profiles', 'usage', 'worktrees'],
  supervision: ['auth', 'sessions', 'usage'],
  workflows: ['sessions', 'supervision'],
  'main-brain': ['auth', 'profiles', 'sessions', 'supervision', 'usage', 'worktrees'],
  mcp: ['auth', 'main-brain', 'sessions', 'supervision'],
  // Notifications watch what needs the person and act through the sessions and the human gate.
  notifications: ['auth', 'usage', 'sessions', 'supervision', 'main-brain'],
  dashboard: ['profiles', 'sessions'],
  // External sessions are sessions reported by claude's hooks, which supervision's rounds may continue.
  external: ['auth', 'sessions', 'supervision'],
  // The cluster view counts each node's sessions as supervision's port lists them (the sessions module provides it).
  nodes: ['sessions', 'supervision'],
  // `brainstem serve` starts the service the composition root builds.
  cli: ['.'],
};

/**
 * Ports a higher feature owns and a lower one implements (dependency inversion): the implementing folder may import
 * that file alone, nothing else of the owner.
 */
const IMPLEMENTS: Readonly<Record<string, readonly string[]>> = {
  // What supervision needs to know about the sessions it watches; the sessions module provides it.
  sessions: ['supervision/session-directory.port.ts'],
};

type Place = { folder: string; layer: number };

const folderOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');
const layerName = (layer: number) => LAYERS[layer].name;

const layerOf = (folder: string) => LAYERS.findIndex((l) => l.folders.includes(folder));

function placeOf(file: string): Place | null {
  const folder = folderOf(file);
  const layer = layerOf(folder);
  return layer < 0 ? null : { folder, layer };
}

/** One line per import that runs against the layers: `file → import: why`. Files outside the tree are not judged. */
function layerViolations(deps: Record<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, imports] of Object.entries(deps)) {
    if (file.startsWith('../')) continue;
    const from = placeOf(file);
    if (!from) {
      out.push(`${file}: folder ${folderOf(file)} is in no layer (add it to LAYERS)`);
      continue;
    }
    for (const dep of imports) {
      const to = dep.startsWith('../') ? null : placeOf(dep);
      if (!to || to.folder === from.folder || to.layer < from.layer) continue;
      if (to.layer > from.layer) {
        out.push(`${file} → ${dep}: ${from.folder} (layer ${layerName(from.layer)}) imports ${to.folder} (layer ${layerName(to.layer)}), a higher layer`);
      } else if (!PEERS[from.folder]?.includes(to.folder) && !IMPLEMENTS[from.folder]?.includes(dep)) {
        out.push(`${file} → ${dep}: ${from.folder} imports ${to.folder}, both in layer ${layerName(from.layer)}, and PEERS does not let it`);
      }
    }
  }
  return out.sort();
}

/** The folders in an order where each comes after every peer it may import; null when the table has a cycle. */
function peerOrder(peers: Readonly<Record<string, readonly string[]>>): string[] | null {
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (folder: string): boolean => {
    if (order.includes(folder)) return true;
    if (visiting.has(folder)) return false;
    visiting.add(folder);
    const ok = (peers[folder] ?? []).every(visit);
    order.push(folder);
    return ok;
  };
  return Object.keys(peers).every(visit) ? order : null;
}

describe('layers: imports point down (madge over src/)', () => {
  let violations: string[];

  beforeAll(async () => {
    violations = layerViolations((await dependencyGraph([join(ROOT, 'src')])).obj());
  });

  it('given the fixture tree, then every upward import is reported with both layers, type-only ones included', async () => {
    const fixture = await dependencyGraph([join(ROOT, 'test', 'fixtures', 'layers')]);
    expect(layerViolations(fixture.obj())).toEqual([
      'common/clock.ts → sessions/session.ts: common (layer shared kernel) imports sessions (layer features), a higher layer',
      'profiles/profile.ts → sessions/session.ts: profiles imports sessions, both in layer features, and PEERS does not let it',
      'scratch/note.ts: folder scratch is in no layer (add it to LAYERS)',
    ]);
  });

  it('places every folder of src/ in exactly one layer, and names no folder that is gone', () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const declared = LAYERS.flatMap((l) => l.folders);
    expect(declared.filter((f) => f !== '.').sort()).toEqual(folders.sort());
    expect(new Set(declared).size).toBe(declared.length);
  });

  it('pairs in PEERS and IMPLEMENTS only folders of one layer', () => {
    const pairs = [...Object.entries(PEERS), ...Object.entries(IMPLEMENTS).map(([f, ports]) => [f, ports.map(folderOf)] as const)];
    const strays = pairs.flatMap(([folder, others]) => others.filter((o) => layerOf(folder) < 0 || layerOf(o) !== layerOf(folder)).map((o) => `${folder} → ${o}`));
    expect(strays).toEqual([]);
  });

  it('keeps the peer table one-way (and sees a table that is not)', () => {
    expect(peerOrder({ a: ['b'], b: ['c'], c: ['a'] })).toBeNull();
    expect(peerOrder(PEERS)).not.toBeNull();
  });

  it('has no upward import', () => {
    expect(violations).toEqual([]);
  });
});
