import { ProfileDoc } from '../profile.schema';

/** A built-in template: shipped with the code, always listed, locked (duplicate it to edit). */
export interface BuiltinTemplate {
  id: string;
  doc: ProfileDoc;
}

/** Built-ins change only with a release, so their timestamps are the release's, not the clock's. */
export const BUILTIN_TEMPLATES_RELEASED_AT = '2026-11-22T00:00:00.000Z';

/** Guard rails every template that may run shell commands shares. */
export const DESTRUCTIVE_COMMANDS = ['Bash(rm -rf *)', 'Bash(git push *)', 'Bash(git push --force *)', 'Bash(git reset --hard *)'];

/**
 * For templates that build and test code: the package registries of npm, PyPI, crates.io and Go reached without a
 * Network request, and npm's and pip's caches writable, in Brainstem's sandbox. Nothing else is widened.
 */
export function packageRegistriesSandbox(): NonNullable<ProfileDoc['sandbox']> {
  return {
    allow_write: ['~/.npm', '~/.cache/pip'],
    network: {
      allow: ['registry.npmjs.org', 'registry.yarnpkg.com', 'pypi.org', 'files.pythonhosted.org', 'crates.io', 'index.crates.io', 'static.crates.io', 'proxy.golang.org', 'sum.golang.org'],
    },
  };
}

/** Fills the fields a template leaves at the document's defaults (docs/architecture/decisions.md#agent-profile-document). */
export function template(id: string, doc: Omit<ProfileDoc, 'version' | 'skills' | 'hooks' | 'auto_apply_dir' | 'default_cwd' | 'model'> & Partial<ProfileDoc>): BuiltinTemplate {
  return { id, doc: { version: 2, model: {}, skills: [], hooks: {}, auto_apply_dir: '', default_cwd: '', ...doc } };
}
