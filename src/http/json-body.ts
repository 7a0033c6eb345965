import { FastifyBodyParser, FastifyInstance } from 'fastify';
import { inheritedKeyPath } from '../common/inherited-key';

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
 * Fastify's own JSON parser (prototype-poisoning checks included), then the depth limit and keys named like
 * Object.prototype members (which the validation pipe would drop silently or fail on), as a 400.
 */
export function depthLimitedJsonParser(fastify: FastifyInstance): FastifyBodyParser<Buffer> {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  return (req, body, done) =>
    parse(req, body.toString('utf8'), (err, value) => {
      if (err) return done(err, undefined);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        return done(Object.assign(new Error(`the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`), { statusCode: 400 }), undefined);
      }
      const inherited = inheritedKeyPath(value);
      if (inherited !== null) {
        return done(Object.assign(new Error(`${inherited}: this key name is not allowed (it names a built-in object member)`), { statusCode: 400 }), undefined);
      }
      done(null, value);
    });
}
