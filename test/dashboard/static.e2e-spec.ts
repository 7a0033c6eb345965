import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { RUNTIMES } from '../../src/profiles/profile.schema';
import { RuntimeCatalog } from '../../src/sessions/runtimes/runtime-catalog';
import { buildDashboard } from '../../src/dashboard/dashboard.build';
import { DASHBOARD_CSP } from '../../src/dashboard/dashboard.static';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';

describe('the dashboard is served by the service itself', () => {
  const web = tempDir('brainstem-web-');
  let files: string[];
  beforeAll(async () => {
    files = await buildDashboard(web.path);
  });
  const t = useTestApp({}, { dashboardDir: () => web.path });
  afterAll(() => web.remove());

  it('Given no token, When the page and its bundles are fetched, Then they come with a strict Content-Security-Policy', async () => {
    const page = await t.rawInject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).toContain("connect-src 'self'");
    expect(DASHBOARD_CSP).not.toMatch(/unsafe-(inline|eval)/);
    expect(page.headers['cache-control']).toBe('no-cache');
    // No inline script: the page loads its own hashed bundle only.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
    const script = files.find((f) => f.startsWith('app-') && f.endsWith('.js'));
    expect(page.body).toContain(`src="/${script}"`);
    // The service worker and the manifest keep their names, so they are revalidated rather than cached for good
    for (const file of ['sw.js', 'manifest.webmanifest', 'action.html']) expect((await t.rawInject({ method: 'GET', url: `/${file}` })).headers['cache-control']).toBe('no-cache');
    for (const file of files) {
      const res = await t.rawInject({ method: 'GET', url: `/${file}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    }
    expect((await t.rawInject({ method: 'HEAD', url: '/index.html' })).statusCode).toBe(200);
  });

  it('Given a query the service refuses everywhere, When it is sent to the page, Then the 400 has the body every route gives', async () => {
    const res = await t.rawInject({ method: 'GET', url: '/?toString=1' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(expect.objectContaining({ statusCode: 400, code: 'invalid_input', message: expect.stringContaining('toString') }));
  });

  it('Given the budget of 150 KB gzipped for the first view, When the bundles are built, Then they fit it', () => {
    const shipped = files.filter((f) => f.endsWith('.js') || f.endsWith('.css'));
    const gzipped = shipped.reduce((sum, f) => sum + gzipSync(readFileSync(join(web.path, f))).length, 0);
    expect(gzipped).toBeLessThanOrEqual(150 * 1024);
  });

  it('Given the page is public, When anything else is asked without a token, Then it is refused', async () => {
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/coding-sessions' })).statusCode).toBe(401);
    expect((await t.rawInject({ method: 'POST', url: '/', payload: {} })).statusCode).toBe(401);
    expect((await t.rawInject({ method: 'GET', url: '/nope.js' })).statusCode).toBe(401);
  });

  it('Given hash routing, When a path under /api or /mcp does not exist, Then it stays a 404 (no catch-all answers with the page)', async () => {
    for (const url of ['/api/v1/nothing-here', '/api/v1/index.html', '/mcp/nothing-here', '/sessions']) {
      const res = await t.inject({ method: 'GET', url });
      expect({ url, status: res.statusCode }).toEqual({ url, status: 404 });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('Given the configured stall threshold and the runtimes, When the page asks for its settings, Then it gets them (user only)', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/dashboard/settings' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.stall_threshold_s).toBe(t.config.supervision.stall_threshold_s);
    expect(body.profile_runtimes).toEqual([...RUNTIMES]);
    // Every runtime the catalog runs, auto first; the command runtime takes a command and needs nothing installed.
    const names = body.session_runtimes.map((r: { name: string }) => r.name);
    expect(names[0]).toBe('auto');
    expect(names.slice(1).every((n: string) => t.app.get(RuntimeCatalog).get(n) !== undefined)).toBe(true);
    expect(names).toEqual(expect.arrayContaining(['claude-code', 'codex', 'command']));
    expect(body.session_runtimes.find((r: { name: string }) => r.name === 'command')).toEqual({ name: 'command', takes_command: true, installed: true });
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/dashboard/settings', headers: t.auth('main_brain') })).statusCode).toBe(403);
  });
});

describe('a service whose dashboard is not built', () => {
  const missing = tempDir('brainstem-noweb-');
  const t = useTestApp({}, { dashboardDir: () => `${missing.path}/web` });
  afterAll(() => missing.remove());

  it('Given no build, When / is fetched, Then it says how to build the page (and a refused query is refused as on every route)', async () => {
    const res = await t.rawInject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(expect.objectContaining({ code: 'not_found', message: expect.stringMatching(/npm run build/) }));
    const refused = await t.rawInject({ method: 'GET', url: '/?toString=1' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual(expect.objectContaining({ statusCode: 400, code: 'invalid_input', message: expect.stringContaining('toString') }));
  });
});

describe("the runtimes the page offers are found on the PATH of the service's host", () => {
  const dirs = tempDir('brainstem-host-');
  const bin = join(dirs.path, 'bin');
  const t = useTestApp({}, {
    dashboardDir: () => join(dirs.path, 'web'),
    // Only claude on the PATH the service was started with, whatever the test process's PATH holds.
    host: { env: { PATH: bin }, home: dirs.path, cwd: dirs.path },
  });
  beforeAll(() => {
    mkdirSync(bin);
    symlinkSync(resolve(__dirname, '../fixtures/bin/claude'), join(bin, 'claude'));
  });
  afterAll(() => dirs.remove());

  it('Given a host whose PATH has claude alone, When the page asks for its settings, Then claude-code is installed and codex is not', async () => {
    const runtimes = (await t.inject({ method: 'GET', url: '/api/v1/dashboard/settings' })).json().session_runtimes as Array<{ name: string; installed: boolean }>;
    expect(runtimes.find((r) => r.name === 'claude-code')?.installed).toBe(true);
    expect(runtimes.find((r) => r.name === 'codex')?.installed).toBe(false);
  });
});
