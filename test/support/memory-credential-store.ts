import { CredentialStore, SecretName } from '../../src/auth/credentials';

/** Secrets in memory, for tests that need credentials without a data directory. */
export class MemoryCredentialStore implements CredentialStore {
  readonly values = new Map<SecretName, string>();

  loadOrCreate(name: SecretName, create: () => string): string {
    if (!this.values.has(name)) this.values.set(name, create());
    return this.values.get(name) as string;
  }

  load(name: SecretName): string | null {
    return this.values.get(name) ?? null;
  }

  replace(name: SecretName, value: string): void {
    this.values.set(name, value);
  }

  pathOf(name: SecretName): string {
    return `/data/${name}`;
  }
}
