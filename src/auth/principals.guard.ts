import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { isLivenessCheck } from '../http/liveness';
import { Principal, PrincipalKind, describePrincipal } from './principal';
import { WORKER_SESSIONS, WorkerSessions } from './worker-sessions.port';

const ALSO_ALLOWED = 'brainstem:also-allowed';

/** Routes are the user's alone unless they name the other principals that may call them too. */
export const AlsoAllowed = (...kinds: Exclude<PrincipalKind, 'user'>[]) => SetMetadata(ALSO_ALLOWED, kinds);

/** A route's rules for the principals other than the user, as routeRefusal applies them. */
export interface RouteRules {
  /** `METHOD /url` as the refusal names it. */
  route: string;
  /** The principals besides the user that may call it (AlsoAllowed). */
  allowed: readonly PrincipalKind[];
  /** The session a worker acts on (named in the path); undefined when the route names none. */
  ownSession: () => string | undefined;
  sessions: WorkerSessions;
}

/**
 * Why `principal` may not call a route with these rules, or null when it may: the user may call every route; another
 * principal only one that allows its kind, and a worker, on a route that names a session, only its own live session's.
 * The guard's rule, and a route served outside Nest's pipeline (src/sessions/signals.route.ts) applies the same.
 */
export function routeRefusal(principal: Principal, rules: RouteRules): DomainError | null {
  if (principal.kind === 'user') return null;
  if (!rules.allowed.includes(principal.kind)) return new DomainError('permission_denied', `${describePrincipal(principal)} may not call ${rules.route}`);
  const target = principal.kind === 'worker' ? rules.ownSession() : undefined;
  if (principal.kind === 'worker' && target !== undefined) {
    const own = rules.sessions.liveWorker(principal.session_id);
    if (!own || rules.sessions.find(target)?.id !== own) return new DomainError('permission_denied', `${describePrincipal(principal)} may act on its own session only`);
  }
  return null;
}

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
    const refusal = routeRefusal(principal, {
      route: `${request.method} ${request.routeOptions.url ?? request.url}`,
      allowed: this.reflector.getAllAndOverride<PrincipalKind[] | undefined>(ALSO_ALLOWED, [context.getHandler(), context.getClass()]) ?? [],
      // No controller route acts on a worker's own session: the one that does is served apart (src/sessions/signals.route.ts).
      ownSession: () => undefined,
      sessions: this.sessions,
    });
    if (refusal) throw refusal;
    return true;
  }
}
