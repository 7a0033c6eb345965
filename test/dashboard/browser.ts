import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../src/dashboard/dashboard.build';
import { CHROMIUM, launchBrowser } from '../support/chromium';
import { tempDir } from '../support/temp-dir';
import { TestApp } from '../support/test-app';
import { useTestApp } from '../support/use-test-app';


/** Screenshots of the views, kept after the run to be looked at (gitignored). */
export const ARTIFACTS = resolve(__dirname, '../../test-artifacts/dashboard');

/**
 * Browser specs run wherever Chromium is; a machine without it skips them, except CI, where a missing browser
 * is a failure (describe runs and the launch fails, naming the path).
 */
export const describeInBrowser: jest.Describe = existsSync(CHROMIUM) || process.env.CI ? describe : describe.skip;

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Opens the dashboard and signs in with the token as a person would: paste it into the prompt. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Open the dashboard' }).click();
  await page.getByRole('heading', { name: /Needs attention/ }).waitFor();
}

/** What a browser spec drives: the service serving a freshly built page, and this test's page. */
export interface DashboardHarness {
  readonly t: TestApp;
  readonly page: Page;
  /** Where the page was built (a spec may serve it from a second app). */
  readonly webDir: string;
}

/**
 * Registers a browser spec's hooks: the page built once into a temp dir, the service serving it (with `env`, or what
 * `env()` answers when the service starts), one Chromium, and a fresh context and page per test.
 */
export function dashboardHarness(options: { env?: Record<string, string> | (() => Record<string, string>); viewport?: { width: number; height: number } } = {}): DashboardHarness {
  const web = tempDir('brainstem-web-');
  const state: { browser?: Browser; context?: BrowserContext; page?: Page } = {};
  beforeAll(() => buildDashboard(web.path));
  const t = useTestApp(options.env ?? {}, { listen: true, dashboardDir: () => web.path, beforeClose: () => state.browser?.close() });
  beforeAll(async () => {
    state.browser = await launchBrowser();
  });
  beforeEach(async () => {
    state.context = await (state.browser as Browser).newContext({ viewport: options.viewport ?? { width: 1100, height: 800 } });
    state.page = await state.context.newPage();
  });
  afterEach(() => state.context?.close());
  afterAll(() => web.remove());
  return {
    t,
    get page() {
      return state.page as Page;
    },
    get webDir() {
      return web.path;
    },
  };
}
