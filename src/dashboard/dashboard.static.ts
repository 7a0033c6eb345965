import fastifyStatic from '@fastify/static';
import { Logger } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { DomainError } from '../common/domain-error';
import { toErrorBody } from '../http/all-exceptions.filter';
import { ErrorStatuses } from '../http/http-errors';

/**
 * The page runs only its own bundle: no inline script, no eval, no inline style, nothing from another origin; it
 * talks to this service alone. Framing is refused (clickjacking an Allow button).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Files whose names do not change with their content (the pages, the service worker, the manifest, the icons): revalidated. */
const UNHASHED = ['.html', '/sw.js', '.webmanifest', '.png', '.svg'];

/** The URL paths of the built page (its index at `/` too); only `/` (which then says how to build it) when it is not built. */
export function dashboardPaths(dir: string): Set<string> {
  if (!existsSync(dir)) return new Set(['/']);
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => '/' + relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
  return new Set(files.includes('/index.html') ? ['/', ...files] : files);
}

/**
 * Serves the built page: one route per file (no wildcard, so a 404 under /api or /mcp stays that route's 404), the
 * index uncached (it names the hashed bundles, which are cached for good). Without a build, `/` says how to make one.
 * Its errors (a refused query) take the shape every other route's do.
 */
export async function serveDashboard(fastify: FastifyInstance, dir: string, statuses: ErrorStatuses): Promise<void> {
  const logger = new Logger('dashboard');
  await fastify.register(async (scope) => {
    scope.setErrorHandler((error, _request, reply) => {
      const body = toErrorBody(error, logger, statuses);
      return reply.status(body.statusCode).send(body);
    });
    if (!existsSync(join(dir, 'index.html'))) {
      scope.get('/', async () => {
        throw new DomainError('not_found', 'the dashboard is not built: run npm run build');
      });
      return;
    }
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: '/',
      wildcard: false,
      decorateReply: false,
      cacheControl: false,
      setHeaders: (reply, path) => {
        reply.header('content-security-policy', DASHBOARD_CSP);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'no-referrer');
        reply.header('cache-control', UNHASHED.some((end) => path.endsWith(end)) ? 'no-cache' : 'public, max-age=31536000, immutable');
      },
    });
  });
}
