import { INestApplication } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { FastifyInstance } from 'fastify';
import { controllerRoutes } from '../../src/http/openapi';

export interface RouteEntry {
  method: string;
  /** The route's path with its parameters as Fastify writes them (`/api/v1/agent-profiles/:id`). */
  url: string;
}

/**
 * Every route the running app serves, read from Fastify's route tree. Fastify lists routes only through
 * `printRoutes` (an `onRoute` hook would have to be installed before Nest registers them, inside createApp),
 * so the tree is read back: each line is `<indent>├── <segment> (<METHODS>)`, four columns per level, and a
 * segment continues its parent's path.
 */
export function listRoutes(fastify: FastifyInstance): RouteEntry[] {
  const routes: RouteEntry[] = [];
  const stack: string[] = [];
  for (const line of fastify.printRoutes({ commonPrefix: false }).split('\n')) {
    const branch = Math.max(line.indexOf('├── '), line.indexOf('└── '));
    if (branch < 0) continue;
    const depth = branch / 4;
    const rest = line.slice(branch + 4);
    const open = rest.lastIndexOf(' (');
    const segment = open >= 0 && rest.endsWith(')') ? rest.slice(0, open) : rest;
    stack.length = depth;
    stack.push(segment);
    if (open < 0 || !rest.endsWith(')')) continue;
    const url = stack.join('');
    for (const method of rest.slice(open + 2, -1).split(', ')) routes.push({ method, url });
  }
  return routes;
}

/** A field a route takes: its validators (`isBoolean`, `isOptional`, …) and the values it allows when it takes only some (`@IsIn`). */
export interface FieldHint {
  key: string;
  checks: string[];
  words: Array<string | number>;
}

export interface RouteFields {
  body: FieldHint[];
  query: FieldHint[];
}

/**
 * The body and query fields of every controller route, keyed `<METHOD> <url>` as listRoutes writes them, read from
 * Nest's route metadata (controllerRoutes) and the DTOs' class-validator metadata: what a generator needs to make requests that get
 * past validation now and then.
 */
export function routeFields(app: INestApplication, prefix: string): Map<string, RouteFields> {
  const storage = getMetadataStorage();
  const fieldsOf = (type: unknown): FieldHint[] => {
    if (typeof type !== 'function' || type === Object) return [];
    const byKey = new Map<string, FieldHint>();
    for (const meta of storage.getTargetValidationMetadatas(type, '', false, false)) {
      const field = byKey.get(meta.propertyName) ?? { key: meta.propertyName, checks: [], words: [] };
      field.checks.push(meta.name ?? meta.type);
      if (meta.name === 'isIn') for (const c of (meta.constraints ?? []).flat()) if (typeof c === 'string' || typeof c === 'number') field.words.push(c);
      byKey.set(meta.propertyName, field);
    }
    return [...byKey.values()];
  };
  const out = new Map<string, RouteFields>();
  for (const route of controllerRoutes(app, prefix)) {
    out.set(`${route.method} ${route.url}`, { body: fieldsOf(route.body), query: fieldsOf(route.query) });
  }
  return out;
}
