import { Session, SessionState } from './types';

export interface SessionFilter {
  state: SessionState | '';
  runtime: string;
  text: string;
}

export const NO_FILTER: SessionFilter = { state: '', runtime: '', text: '' };

/**
 * Whether a session shows through the filter. The text is a plain, case-insensitive substring of the alias, title,
 * id or cwd: user text is never compiled into a pattern.
 */
export function matchesFilter(s: Session, f: SessionFilter): boolean {
  if (f.state !== '' && s.state !== f.state) return false;
  if (f.runtime !== '' && s.runtime !== f.runtime) return false;
  const text = f.text.trim().toLowerCase();
  if (text === '') return true;
  return [s.alias, s.title, s.id, s.cwd].some((field) => field.toLowerCase().includes(text));
}

export interface Flip {
  id: string;
  alias: string;
  title: string;
  /** Whether the session is excluded after the flip. */
  excluded: boolean;
}

/** What `invert` over these sessions changes: each one's exclusion flips (the service does the same, exited ones too). */
export function invertPreview(visible: readonly Session[]): Flip[] {
  return visible.map((s) => ({ id: s.id, alias: s.alias, title: s.title, excluded: !s.excluded }));
}
