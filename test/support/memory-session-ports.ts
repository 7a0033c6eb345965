import type { EmittedFile } from '../../src/profiles/emitters/emitter.types';
import { ProfileDoc, normalizeDocument } from '../../src/profiles/profile.schema';
import { DomainError } from '../../src/common/domain-error';
import { EnvMap, SessionEnvStore } from '../../src/sessions/session-env.store';
import { ProfileFinding } from '../../src/sessions/session.decider';
import { SessionProfiles, sessionDenyRules } from '../../src/sessions/session-profiles.port';
import { SessionFile, SessionWorkspace } from '../../src/sessions/session-workspace.port';

/** A workspace in memory: the directories it is told exist, and the files written per session. */
export class MemorySessionWorkspace implements SessionWorkspace {
  readonly configs = new Map<string, SessionFile[]>();

  constructor(private readonly directories: Set<string>) {}

  async isDirectory(path: string): Promise<boolean> {
    return this.directories.has(path);
  }

  configDir(sessionId: string): string {
    return `/memory/session-config/${sessionId}`;
  }

  async writeConfig(sessionId: string, files: readonly SessionFile[]): Promise<void> {
    this.configs.set(sessionId, [...files]);
  }

  async removeConfig(sessionId: string): Promise<void> {
    this.configs.delete(sessionId);
  }
}

/** A profile as the memory profiles hold it: its document, what it emits, and the findings that keep it from applying. */
export interface MemoryProfile {
  doc: Partial<ProfileDoc>;
  emitted?: EmittedFile[];
  errors?: ProfileFinding[];
}

/** Profiles in memory, by id; a request names one or gets `default`. */
export class MemorySessionProfiles implements SessionProfiles {
  constructor(readonly profiles: Map<string, MemoryProfile>) {}

  private doc(id: string): ProfileDoc {
    const p = this.profiles.get(id);
    if (!p) throw new DomainError('unknown_profile', `profile_id: no profile ${id}`);
    return normalizeDocument({ name: id, ...p.doc });
  }

  async resolve(request: { profile_id: string | null }): Promise<{ id: string; doc: ProfileDoc }> {
    const id = request.profile_id ?? 'default';
    return { id, doc: this.doc(id) };
  }

  async emission(id: string): Promise<{ doc: ProfileDoc; files: readonly EmittedFile[]; errors: readonly ProfileFinding[] }> {
    const p = this.profiles.get(id);
    return { doc: this.doc(id), files: p?.emitted ?? [], errors: p?.errors ?? [] };
  }

  async denyRules(id: string): Promise<string[] | null> {
    return this.profiles.has(id) ? sessionDenyRules(this.doc(id)) : null;
  }
}

/** Env values in memory. */
export class MemorySessionEnvStore implements SessionEnvStore {
  readonly values = new Map<string, EnvMap>();

  async save(sessionId: string, env: EnvMap): Promise<void> {
    this.values.set(sessionId, { ...env });
  }

  async load(sessionId: string): Promise<EnvMap | null> {
    return this.values.get(sessionId) ?? null;
  }

  async remove(sessionId: string): Promise<void> {
    this.values.delete(sessionId);
  }

  async list(): Promise<string[]> {
    return [...this.values.keys()];
  }
}
