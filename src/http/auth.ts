import { createHash, timingSafeEqual } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { errorBody } from './http-errors';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** When a token is configured, every request needs `Authorization: Bearer <token>`. */
export function installBearerAuth(fastify: FastifyInstance, token: string | null): void {
  if (!token) return;
  const expected = digest(token);
  fastify.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    // Compare digests so the comparison is constant-time whatever the lengths.
    if (!match || !timingSafeEqual(digest(match[1].trim()), expected)) {
      await reply
        .status(401)
        .header('www-authenticate', 'Bearer')
        .send(errorBody(401, 'unauthorized', 'missing or invalid bearer token (Authorization: Bearer <BRAINSTEM_API_TOKEN>)'));
    }
  });
}
