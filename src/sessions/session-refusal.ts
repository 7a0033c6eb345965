import { DomainErrorCode } from '../common/domain-error';
import { SessionFact } from './session.events';

export interface SessionRefusal {
  code: DomainErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export type SessionDecision = { events: SessionFact[] } | { error: SessionRefusal };

export function refuse(code: DomainErrorCode, message: string, details?: Record<string, unknown>): { error: SessionRefusal } {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}
