import { PROFILE_ID_PATTERN } from './profile.schema';

/** Ids derived from names, made unique. Pure. */

const MAX_ID_LENGTH = 64;

/** "Code Reviewer (Go)" → "code-reviewer-go"; never empty, never longer than an id may be. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '');
  const cut = slug.slice(0, MAX_ID_LENGTH).replace(/-+$/, '');
  return PROFILE_ID_PATTERN.test(cut) ? cut : 'profile';
}

/** `base`, else `base-2`, `base-3`, … (shortening base so the suffix fits). */
export function uniqueId(base: string, taken: (id: string) => boolean): string {
  if (!taken(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, MAX_ID_LENGTH - suffix.length).replace(/-+$/, '') + suffix;
    if (!taken(candidate)) return candidate;
  }
}

/** The longest a profile name may be (the schema's limit). */
export const MAX_NAME_LENGTH = 200;

/**
 * `base + suffix`, else `base + suffix (2)`, `(3)`, … for names that must not collide (imports, copies); `base` is
 * shortened so every candidate stays within the schema's limit.
 */
export function uniqueName(base: string, taken: (name: string) => boolean, suffix = ''): string {
  for (let n = 1; ; n++) {
    const tail = n === 1 ? suffix : `${suffix} (${n})`;
    const candidate = [...base].slice(0, MAX_NAME_LENGTH - [...tail].length).join('').trimEnd() + tail;
    if (!taken(candidate)) return candidate;
  }
}
