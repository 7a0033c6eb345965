/**
 * What the service was started in, read from the process once, by the app's composition (src/app.module.ts), and
 * handed to the features as configuration: the environment (workers inherit it without credentials, see inheritedEnv;
 * PATH says which runtimes are installed), the home `~/` means, and the directory relative paths start from.
 */
export interface ServiceHost {
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  cwd: string;
}

export const SERVICE_HOST = Symbol('ServiceHost');
