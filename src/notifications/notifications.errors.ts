declare module '../common/domain-error' {
  interface DomainErrorStatus {
    action_used: 409;
    action_expired: 410;
    action_stale: 409;
    subscription_not_found: 404;
  }
}

/** The notifications' error codes: an action link used again, expired, or for something that no longer waits; an unknown push device. */
export const NOTIFICATION_ERRORS = {
  action_used: 409,
  action_expired: 410,
  action_stale: 409,
  subscription_not_found: 404,
} as const;
