import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { isLivenessCheck } from '../http/liveness';
import { PrincipalKind, describePrincipal } from './principal';
import { WORKER_SESSIONS, WorkerSessions } from './worker-sessions.port';

const ALSO_ALLOWED = 'brainstem:also-allowed';
const OWN_SESSION_PARAM = 'brainstem:own-session-param';

/** Routes are the user's alone unless they name the other principals that may call them too. */
export const AlsoAllowed = (...kinds: Exclude<PrincipalKind, 'user'>[]) => SetMetadata(ALSO_ALLOWED, kinds);

/** A worker may call this route only for its own session, named by this path parameter. */
export const OwnSessionParam = (param: string) => SetMetadata(OWN_SESSION_PARAM, param);

/**
 * What each principal may do over REST. Default deny: a route not marked is the user's only, so a new route
 * never opens to the brain or a worker by accident.
 */
@Injectable()
export class PrincipalsGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(WORKER_SESSIONS) private readonly sessions: WorkerSessions,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest & { params: Record<string, string> }>();
    const principal = request.principal;
    // The authentication hook answered already; only the liveness check gets here without a principal (src/http/liveness.ts).
    if (!principal) {
      if (isLivenessCheck(request.method, request.routeOptions.url)) return true;
      throw new DomainError('unauthorized', 'missing credential');
    }
    if (principal.kind === 'user') return true;
    const targets = [context.getHandler(), context.getClass()];
    const allowed = this.reflector.getAllAndOverride<PrincipalKind[] | undefined>(ALSO_ALLOWED, targets) ?? [];
    if (!allowed.includes(principal.kind)) {
      throw new DomainError('permission_denied', `${describePrincipal(principal)} may not call ${request.method} ${request.routeOptions.url ?? request.url}`);
    }
    const param = this.reflector.getAllAndOverride<string | undefined>(OWN_SESSION_PARAM, targets);
    if (principal.kind === 'worker' && param !== undefined) {
      const own = this.sessions.liveWorker(principal.session_id);
      if (!own || this.sessions.find(request.params[param])?.id !== own) {
        throw new DomainError('permission_denied', `${describePrincipal(principal)} may act on its own session only`);
      }
    }
    return true;
  }
}
