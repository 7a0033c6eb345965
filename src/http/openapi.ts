import { INestApplication, RequestMethod, SetMetadata } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA, SSE_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { SchemaObject, SchemaRegistry, dtoRef, dtoSchema } from '../common/dto-schema';
import { ErrorStatusTable } from './http-errors';
import { isLivenessCheck } from './liveness';

export const OPENAPI_JSON_PATH = '/api/v1/openapi.json';
export const OPENAPI_PAGE_PATH = '/api/v1/docs';

type Dto = abstract new (...args: never[]) => object;

const BODY_NOTE = 'brainstem:body-note';

/** A free-form JSON object body, and what decides its shape. */
export const BodyNote = (note: string) => SetMetadata(BODY_NOTE, note);

/** A controller route as Nest declares it: where it is, and the DTOs of its body and query. */
export interface ControllerRoute {
  /** Swagger's operationId: `<Controller>_<handler>`. */
  operationId: string;
  method: string;
  /** Fastify's form, `/api/v1/agent-profiles/:id`. */
  url: string;
  body: Dto | null;
  query: Dto | null;
  /** A DTO of the path parameters (`@Param() p: ProfileIdParam`), when they are validated as one. */
  params: Dto | null;
  bodyOneOf: Dto[] | null;
  bodyNote: string | null;
  sse: boolean;
}

const isDto = (type: unknown): type is Dto => typeof type === 'function' && type !== Object;

/** Every controller route, read from Nest's route metadata. */
export function controllerRoutes(app: INestApplication, prefix: string): ControllerRoute[] {
  const out: ControllerRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (typeof metatype !== 'function') continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, metatype) ?? '');
      for (const name of Object.getOwnPropertyNames(metatype.prototype)) {
        const handler = (metatype.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const url = `/${[prefix, base, String(Reflect.getMetadata(PATH_METADATA, handler) ?? '')].join('/')}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
        const types = (Reflect.getMetadata('design:paramtypes', metatype.prototype, name) ?? []) as unknown[];
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, metatype, name) ?? {}) as Record<string, { index: number }>;
        let body: Dto | null = null;
        let query: Dto | null = null;
        let params: Dto | null = null;
        for (const [kind, { index }] of Object.entries(args)) {
          const paramType = Number(kind.split(':')[0]);
          const type = types[index];
          if (paramType === RouteParamtypes.BODY && isDto(type)) body = type;
          if (paramType === RouteParamtypes.QUERY && isDto(type)) query = type;
          if (paramType === RouteParamtypes.PARAM && isDto(type)) params = type;
        }
        out.push({
          operationId: `${metatype.name}_${name}`,
          method: RequestMethod[method],
          url,
          body,
          query,
          params,
          // A union body (chosen by a field, validated by the service) is a route served apart: its own description says so.
          bodyOneOf: null,
          bodyNote: (Reflect.getMetadata(BODY_NOTE, handler) as string | undefined) ?? null,
          sse: Reflect.getMetadata(SSE_METADATA, handler) === true,
        });
      }
    }
  }
  return out;
}

/** Error schemas, one per status: the shared body with `code` limited to the codes of that status (from the app's table, so a code a feature adds is listed). */
function errorSchemas(statuses: ErrorStatusTable): Record<string, SchemaObject> {
  const byStatus = new Map<number, string[]>();
  for (const [code, status] of Object.entries(statuses)) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const schemas: Record<string, SchemaObject> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    schemas[`Error${status}`] = {
      type: 'object',
      properties: {
        statusCode: { type: 'integer', enum: [status] },
        error: { type: 'string', description: 'The HTTP reason phrase.' },
        code: { type: 'string', enum: codes.sort() },
        message: { type: 'string', description: 'What was wrong, naming the field or value.' },
        details: { type: 'object', description: 'Facts a client may act on (such as the pending request).' },
      },
      required: ['statusCode', 'error', 'code', 'message'],
    };
  }
  return schemas;
}

type Operation = {
  operationId?: string;
  tags?: string[];
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: SchemaObject }>;
  requestBody?: unknown;
  responses: Record<string, { description: string; content?: Record<string, { schema: SchemaObject }> }>;
  security?: unknown;
};

const errorResponses = (schemas: Record<string, SchemaObject>): Operation['responses'] =>
  Object.fromEntries(
    Object.keys(schemas).map((name) => {
      const status = name.slice('Error'.length);
      return [status, { description: `Error (${(schemas[name].properties?.code.enum ?? []).join(', ')})`, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } }];
    }),
  );

const json = (schema: SchemaObject) => ({ required: true, content: { 'application/json': { schema } } });

/**
 * The OpenAPI document: paths, methods and path parameters from Swagger's scan of the controllers; bodies and query
 * parameters from the DTOs' validators (dtoSchema), so a limit is stated only on the DTO; every operation's error
 * responses with the shared error body and the codes of each status; /mcp, which is not a controller, and the routes
 * served by Fastify itself (`native`), each described as a controller route would be.
 */
export function buildOpenApiDocument(app: INestApplication, prefix: string, version: string, statuses: ErrorStatusTable, native: readonly ControllerRoute[] = []): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Brainstem')
    .setDescription(
      'Runs AI coding sessions and supervises them. Every route but the liveness check (GET /api/v1/health) takes `Authorization: Bearer <token>`; the user token is in the api-token file of the data directory.',
    )
    .setVersion(version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque' }, 'bearer')
    .addSecurityRequirements('bearer')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  const registry: SchemaRegistry = new Map();
  const errors = errorSchemas(statuses);
  const routes = new Map(controllerRoutes(app, prefix).map((r) => [r.operationId, r]));
  // A controller's tags, by its operations' id prefix (`SessionsController_`): a route served apart keeps its controller's.
  const tagsOf = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const operation of Object.values(item) as Operation[]) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      if (operation.tags) tagsOf.set(controllerOf(operation.operationId ?? ''), operation.tags);
      const route = routes.get(operation.operationId ?? '');
      if (!route) continue;
      describeOperation(path, operation, route, registry);
      Object.assign(operation.responses, errorResponses(errors));
      // Open without a credential: no security requirement overrides the document's bearer one.
      if (isLivenessCheck(route.method, route.url)) operation.security = [];
    }
  }
  for (const route of native) {
    const path = route.url.replace(/:([^/]+)/g, '{$1}');
    const tags = tagsOf.get(controllerOf(route.operationId));
    const operation: Operation = { operationId: route.operationId, ...(tags ? { tags } : {}), parameters: [], responses: { '200': { description: '' } } };
    describeOperation(path, operation, route, registry);
    Object.assign(operation.responses, errorResponses(errors));
    document.paths[path] = { ...document.paths[path], [route.method.toLowerCase()]: operation };
  }
  document.paths['/mcp'] = mcpPath(errorResponses(errors));
  document.components = {
    ...document.components,
    schemas: { ...Object.fromEntries(registry), ...errors } as NonNullable<OpenAPIObject['components']>['schemas'],
  };
  return document;
}

const controllerOf = (operationId: string): string => operationId.slice(0, operationId.indexOf('_') + 1);

function describeOperation(path: string, operation: Operation, route: ControllerRoute, registry: SchemaRegistry): void {
  if (route.body) operation.requestBody = json(dtoRef(route.body, registry));
  else if (route.bodyOneOf) operation.requestBody = json({ oneOf: route.bodyOneOf.map((t) => dtoRef(t, registry)) });
  else if (route.bodyNote) operation.requestBody = json({ type: 'object', description: route.bodyNote });
  else delete operation.requestBody;
  const params = (operation.parameters ?? []).filter((p) => p.in !== 'query');
  // Path parameters validated as one DTO are not seen by Swagger's scan.
  const pathSchema = route.params ? dtoSchema(route.params, registry) : null;
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    if (!params.some((p) => p.in === 'path' && p.name === name)) params.push({ name, in: 'path', required: true, schema: pathSchema?.properties?.[name] ?? { type: 'string' } });
  }
  if (route.query) {
    const schema = dtoSchema(route.query, registry);
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      params.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: property });
    }
  }
  operation.parameters = params;
  if (route.sse) {
    const [status] = Object.keys(operation.responses);
    operation.responses[status] = {
      description: 'Server-sent events: `id` (the journal seq, resumable with Last-Event-ID), `event` (the type) and `data` (JSON).',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    };
  }
}

function mcpPath(errors: Operation['responses']): OpenAPIObject['paths'][string] {
  const notAllowed = { description: 'Stateless endpoint: only POST.', content: { 'application/json': { schema: { type: 'object' } } } };
  return {
    post: {
      operationId: 'mcp_post',
      summary: 'MCP over Streamable HTTP (stateless): a JSON-RPC request; the tools are those of GET /api/v1/session-os/main-brain/tools for the caller.',
      requestBody: json({ type: 'object', description: 'A JSON-RPC 2.0 message.' }),
      responses: { '200': { description: 'A JSON-RPC response (JSON or an event stream).' }, ...errors },
    },
    get: { operationId: 'mcp_get', responses: { '405': notAllowed, ...errors } },
    delete: { operationId: 'mcp_delete', responses: { '405': notAllowed, ...errors } },
  } as OpenAPIObject['paths'][string];
}

/** Whether a request is for the API description (the document, the page and its assets): served without a credential. */
export function isApiDescription(method: string, routeUrl: string | undefined): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return routeUrl === OPENAPI_JSON_PATH || routeUrl === OPENAPI_PAGE_PATH || (routeUrl?.startsWith(`${OPENAPI_PAGE_PATH}/`) ?? false);
}

/** Serves the document at OPENAPI_JSON_PATH and the Swagger UI page at OPENAPI_PAGE_PATH (its Authorize button takes the bearer token). */
export function installOpenApi(app: INestApplication, prefix: string, version: string, statuses: ErrorStatusTable, native: readonly ControllerRoute[] = []): void {
  SwaggerModule.setup(OPENAPI_PAGE_PATH, app, () => buildOpenApiDocument(app, prefix, version, statuses, native), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'Brainstem API',
  });
}
