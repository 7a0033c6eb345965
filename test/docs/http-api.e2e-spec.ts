import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isApiDescription } from '../../src/http/openapi';
import { listRoutes } from '../support/route-list';
import { TestApp, startTestApp } from '../support/test-app';
import { REPO_ROOT } from './markdown';

/** A route with its parameters unnamed, so `/x/:id` (Fastify) and `/x/{session}` (the docs) compare equal. */
const shape = (method: string, path: string): string => `${method} ${path.replace(/(:[^/]+|\{[^}]+\})/g, '{}')}`;

describe('the HTTP API reference', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('lists every route the app serves under /api/v1', () => {
    // Given the routes Fastify serves (HEAD is answered for every GET; the OpenAPI document and page are listed apart)
    const served = listRoutes(t.app.getHttpAdapter().getInstance())
      .filter((r) => r.method !== 'HEAD' && r.url.startsWith('/api/v1/') && !isApiDescription(r.method, r.url))
      .map((r) => shape(r.method, r.url));
    // When the reference is read: each route as `METHOD /api/v1/…`, its query left off
    const page = readFileSync(resolve(REPO_ROOT, 'docs/reference/http-api.md'), 'utf8');
    const documented = new Set([...page.matchAll(/`(GET|POST|PATCH|PUT|DELETE) (\/api\/v1\/[^`?\s]*)/g)].map((m) => shape(m[1], m[2])));
    // Then none is missing
    expect(served.length).toBeGreaterThan(50);
    expect([...new Set(served)].filter((route) => !documented.has(route))).toEqual([]);
  });
});
