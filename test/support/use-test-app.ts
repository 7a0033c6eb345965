import { TestApp, TestAppOptions, startTestApp } from './test-app';

type Env = Record<string, string>;

export interface UseTestAppOptions extends Omit<TestAppOptions, 'dashboardDir'> {
  /** May be a function, read when the app starts (so a lazily made temp dir is made only then). */
  dashboardDir?: string | (() => string);
  /** A fresh app around each test; by default one app for the whole describe block. */
  each?: boolean;
  /** Runs while the app is still up, before it closes: stop what the tests started through it. */
  beforeClose?: (app: TestApp) => unknown;
}

/**
 * The service started (startTestApp, in a temp dir of its own) before the tests of the describe block this is called
 * in, and closed with its temp dir removed after them. Hooks declared after this call run with the app started, and
 * their teardown runs after it closed. The handle reads through to the app started last; reading it earlier throws.
 * `env` may be a function, read when the app starts.
 */
export function useTestApp(env: Env | (() => Env) = {}, options: UseTestAppOptions = {}): TestApp {
  const { each = false, beforeClose, dashboardDir, ...start } = options;
  let current: TestApp | null = null;
  const close = async () => {
    const app = current;
    current = null;
    if (!app) return;
    try {
      await beforeClose?.(app);
    } finally {
      await app.close();
    }
  };
  (each ? beforeEach : beforeAll)(async () => {
    current = await startTestApp(typeof env === 'function' ? env() : env, { ...start, dashboardDir: typeof dashboardDir === 'function' ? dashboardDir() : dashboardDir });
  });
  (each ? afterEach : afterAll)(close);
  return new Proxy({} as TestApp, {
    get(_, key) {
      if (key === 'close') return close;
      // Probes such as `then` (is it a promise?) see an object without that key.
      if (typeof key === 'symbol' || key === 'then') return current ? Reflect.get(current, key) : undefined;
      if (!current) throw new Error(`useTestApp: read of ${key} before the app started (read it in a test, or in a hook declared after useTestApp)`);
      return current[key as keyof TestApp];
    },
  });
}
