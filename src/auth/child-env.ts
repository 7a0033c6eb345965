/** Variables that carry a credential: a child started by the service gets its own, never the service's. */
export const CREDENTIAL_VARIABLES = ['BRAINSTEM_API_TOKEN', 'BRAINSTEM_TOKEN'] as const;

/** The service's environment for a child process, without any credential it was started with. */
export function inheritedEnv(source: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) if (v !== undefined && !(CREDENTIAL_VARIABLES as readonly string[]).includes(k)) env[k] = v;
  return env;
}
