import { ERROR_STATUSES } from '../../src/app.errors';
import { OPENAPI_JSON_PATH, OPENAPI_PAGE_PATH, isApiDescription } from '../../src/http/openapi';
import { listRoutes } from '../support/route-list';
import { useTestApp } from '../support/use-test-app';

interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  maxLength?: number;
  maximum?: number;
  oneOf?: Schema[];
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  operationId: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> }>;
  security?: Array<Record<string, string[]>>;
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { type: string; scheme: string }> };
  security: Array<Record<string, string[]>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every `$ref` in a value, wherever it nests. */
function refsIn(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refsIn(v)));
}

describe('the OpenAPI document', () => {
  const t = useTestApp();
  let doc: Document;

  beforeAll(async () => {
    const res = await t.rawInject({ method: 'GET', url: OPENAPI_JSON_PATH });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });

  const operations = (): Array<{ path: string; method: string; op: Operation }> =>
    Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

  it('lists every route the app serves with its method, and no route it does not serve', () => {
    const served = listRoutes(t.app.getHttpAdapter().getInstance())
      // HEAD is answered for every GET; the description does not describe itself; the dashboard's static files (served
      // when dist/web is built) are the page, not the API.
      .filter((r) => r.method !== 'HEAD' && !isApiDescription(r.method, r.url) && (r.url.startsWith('/api/') || r.url === '/mcp'))
      .map((r) => `${r.method} ${r.url}`);
    const described = operations().map(({ path, method }) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`);
    expect(served.length).toBeGreaterThan(50);
    expect([...described].sort()).toEqual([...new Set(served)].sort());
  });

  it('is an OpenAPI 3 document whose references resolve and whose path parameters are declared', () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info.title).toBe('Brainstem');
    expect(typeof doc.info.version).toBe('string');
    for (const ref of refsIn(doc)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas).toHaveProperty([ref.slice('#/components/schemas/'.length)]);
    }
    const operationIds = new Set<string>();
    for (const { path, method, op } of operations()) {
      expect(path.startsWith('/')).toBe(true);
      expect(METHODS).toContain(method);
      expect(operationIds.has(op.operationId)).toBe(false);
      operationIds.add(op.operationId);
      expect(Object.keys(op.responses).length).toBeGreaterThan(0);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(status).toMatch(/^[1-5]\d\d$/);
        expect(typeof response.description).toBe('string');
      }
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) expect(declared).toContain(name);
      for (const p of op.parameters ?? []) expect(['path', 'query', 'header', 'cookie']).toContain(p.in);
    }
  });

  it('declares bearer authentication for every operation but the liveness check, which it lists open', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    const open = operations().filter(({ op }) => op.security !== undefined);
    expect(open.map(({ path, method, op }) => ({ path, method, security: op.security }))).toEqual([{ path: '/api/v1/health', method: 'get', security: [] }]);
    expect(doc.paths['/api/v1/ready'].get).toBeDefined();
  });

  it('gives every operation the error responses of every status, the code an enum of that status’s codes', () => {
    const byStatus = new Map<string, string[]>();
    for (const [code, status] of Object.entries(ERROR_STATUSES)) byStatus.set(String(status), [...(byStatus.get(String(status)) ?? []), code]);
    expect(byStatus.get('400')).toContain('invalid_input');
    for (const { path, method, op } of operations()) {
      for (const [status, codes] of byStatus) {
        const ref = op.responses[status]?.content?.['application/json']?.schema.$ref;
        expect({ path, method, status, ref }).toEqual({ path, method, status, ref: expect.any(String) });
        const schema = doc.components.schemas[(ref as string).split('/').pop() as string];
        expect(schema.required).toEqual(expect.arrayContaining(['statusCode', 'error', 'code', 'message']));
        expect([...(schema.properties?.code.enum ?? [])].sort()).toEqual([...codes].sort());
      }
    }
  });

  it('states bodies and query parameters as the DTOs validate them', () => {
    const create = doc.paths['/api/v1/coding-sessions'].post.requestBody?.content['application/json'].schema;
    const createSchema = doc.components.schemas[(create?.$ref ?? '').split('/').pop() as string];
    expect(createSchema.properties?.cwd).toMatchObject({ type: 'string', maxLength: 4096 });
    expect(createSchema.properties?.args).toMatchObject({ type: 'array' });
    const binding = doc.components.schemas.ProjectBindingDto;
    expect(binding.required).toEqual(expect.arrayContaining(['project_dir']));
    const events = doc.paths['/api/v1/journal/events'].get.parameters ?? [];
    expect(events.find((p) => p.name === 'limit')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', maximum: 1000 } });
    expect(events.find((p) => p.name === 'after_seq')).toMatchObject({ in: 'query' });
    const signals = doc.paths['/api/v1/coding-sessions/{id}/signals'].post.requestBody?.content['application/json'].schema;
    expect(signals?.oneOf?.length).toBe(6);
    // Served by Fastify itself, it is listed with its controller's other routes.
    expect(doc.paths['/api/v1/coding-sessions/{id}/signals'].post.tags).toEqual(doc.paths['/api/v1/coding-sessions'].post.tags);
    expect(doc.paths['/api/v1/coding-sessions'].post.tags?.length).toBeGreaterThan(0);
    const profile = doc.components.schemas.CreateProfileDto;
    expect(profile.required).toEqual(['name']);
    expect(profile.properties?.target_runtime.enum).toContain('claude-code');
  });

  it('states a limit once: the tools\' JSON Schemas and the REST bodies are read from the same DTO fields', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/tools' });
    const tools = new Map((res.json().tools as Array<{ name: string; parameters: Schema }>).map((tool) => [tool.name, tool.parameters]));
    const body = (path: string): Schema => {
      const ref = doc.paths[path].post.requestBody?.content['application/json'].schema.$ref ?? '';
      return doc.components.schemas[ref.split('/').pop() as string];
    };
    const message = body('/api/v1/coding-sessions/{id}/messages');
    expect(tools.get('send_to_session')?.properties?.text).toEqual(message.properties?.text);
    expect(message.properties?.text).toMatchObject({ type: 'string', maxLength: 65536, description: 'at most 65536 bytes of UTF-8' });
    const permission = body('/api/v1/coding-sessions/{id}/permission');
    // An optional field is nullable in OpenAPI 3.0; JSON Schema says it by leaving it out of required.
    for (const field of ['decision', 'reason', 'request_id']) {
      expect(tools.get('resolve_permission')?.properties?.[field]).toEqual({ ...permission.properties?.[field], nullable: undefined });
    }
    expect(permission.properties?.request_id).toMatchObject({ maxLength: 200, nullable: true, description: expect.stringContaining('request_id') });
    expect(tools.get('resolve_permission')?.required).toEqual(['session', 'decision']);
    const round = body('/api/v1/session-os/main-brain/rounds/{id}/complete');
    expect(tools.get('complete_round')?.properties?.summary).toMatchObject({ maxLength: round.properties?.summary.maxLength });
  });

  it('describes the event streams as text/event-stream', () => {
    for (const path of ['/api/v1/events/stream', '/api/v1/session-os/main-brain/messages/stream', '/api/v1/session-os/main-brain/rounds/stream']) {
      expect(Object.keys(doc.paths[path].get.responses['200'].content ?? {})).toEqual(['text/event-stream']);
    }
  });
});

describe('serving the API description', () => {
  const t = useTestApp();

  it('serves the document and the page without a token; the page carries the document with its bearer scheme', async () => {
    for (const url of [OPENAPI_JSON_PATH, OPENAPI_PAGE_PATH, `${OPENAPI_PAGE_PATH}/swagger-ui.css`, `${OPENAPI_PAGE_PATH}/swagger-ui-init.js`]) {
      expect({ url, status: (await t.rawInject({ method: 'GET', url })).statusCode }).toEqual({ url, status: 200 });
    }
    expect((await t.rawInject({ method: 'GET', url: OPENAPI_PAGE_PATH })).headers['content-type']).toMatch(/^text\/html/);
    const init = (await t.rawInject({ method: 'GET', url: `${OPENAPI_PAGE_PATH}/swagger-ui-init.js` })).body;
    expect(init).toContain('"securitySchemes"');
    expect(init).toContain('"bearer"');
  });

  it('keeps the Host and Origin checks on the description', async () => {
    for (const url of [OPENAPI_JSON_PATH, OPENAPI_PAGE_PATH]) {
      const host = await t.rawInject({ method: 'GET', url, headers: { host: 'attacker.example' } });
      expect({ url, status: host.statusCode, code: host.json().code }).toEqual({ url, status: 403, code: 'host_not_allowed' });
      const origin = await t.rawInject({ method: 'GET', url, headers: { origin: 'https://attacker.example' } });
      expect({ url, status: origin.statusCode, code: origin.json().code }).toEqual({ url, status: 403, code: 'origin_not_allowed' });
    }
  });

  it('opens nothing else without a token', async () => {
    for (const [method, url] of [
      ['POST', OPENAPI_JSON_PATH],
      ['GET', '/api/v1/openapi.yaml'],
      ['GET', '/api/v1/docsx'],
      ['GET', '/api/v1/ready'],
      ['GET', '/api/v1/coding-sessions'],
    ] as const) {
      const res = await t.rawInject({ method, url });
      expect({ method, url, status: res.statusCode }).toEqual({ method, url, status: 401 });
    }
  });
});
