import { FastifyBodyParser, FastifyInstance } from 'fastify';
import { inheritedKeyProblem } from '../common/inherited-key';

/** Deeper JSON bodies are refused: class-transformer and the validators recurse, and would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests objects and arrays deeper than `max` levels. Iterative, so it cannot overflow itself. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Fastify's own JSON parser, then the depth limit and keys named like Object.prototype members (which the validation
 * pipe would drop silently or fail on, and which include `__proto__` and `constructor`), as a 400 naming the key.
 * Fastify's poisoning checks are left to that check: they refuse the same keys, but as "Body is not valid JSON".
 * JSON.parse makes a `__proto__` key an own property, so nothing is polluted before the check refuses it.
 */
export function depthLimitedJsonParser(fastify: FastifyInstance): FastifyBodyParser<Buffer> {
  const parse = fastify.getDefaultJsonParser('ignore', 'ignore');
  return (req, body, done) =>
    parse(req, body.toString('utf8'), (err, value) => {
      if (err) return done(err, undefined);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        return done(badRequest(`the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      }
      const inherited = inheritedKeyProblem(value);
      if (inherited !== null) return done(badRequest(inherited), undefined);
      done(null, value);
    });
}

/** The same rule for query strings, which no body parser sees (`?toString=1` was dropped without a word). */
export function refuseInheritedQueryKeys(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (req, _reply, done) => {
    const inherited = inheritedKeyProblem(req.query);
    done(inherited === null ? undefined : badRequest(inherited));
  });
}

const badRequest = (message: string): Error => Object.assign(new Error(message), { statusCode: 400 });
