import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Browser, Page, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`), which .ci/run installs; BRAINSTEM_CHROMIUM names another. */
export const CHROMIUM = process.env.BRAINSTEM_CHROMIUM ?? '/usr/bin/chromium';

/** Screenshots of the views, kept after the run to be looked at (gitignored). */
export const ARTIFACTS = resolve(__dirname, '../../test-artifacts/dashboard');

/**
 * Browser specs run wherever Chromium is; a machine without it skips them, except CI, where a missing browser
 * is a failure (describe runs and the launch fails, naming the path).
 */
export const describeInBrowser: jest.Describe = existsSync(CHROMIUM) || process.env.CI ? describe : describe.skip;

const majorOf = (version: string): number | null => {
  const m = /(\d+)\.\d+\.\d+/.exec(version);
  return m ? Number(m[1]) : null;
};

/** The Chromium major playwright-core was released for (its browsers.json). */
export function playwrightChromiumMajor(): number | null {
  const browsers = JSON.parse(readFileSync(join(dirname(require.resolve('playwright-core')), 'browsers.json'), 'utf8')) as { browsers: { name: string; browserVersion: string }[] };
  const entry = browsers.browsers.find((b) => b.name === 'chromium');
  return entry ? majorOf(entry.browserVersion) : null;
}

/** A warning when the installed Chromium and playwright-core's drift apart (the protocol may then differ); else null. */
export function chromiumDrift(installedVersion: string, expectedMajor: number | null): string | null {
  const installed = majorOf(installedVersion);
  if (installed === null || expectedMajor === null) return `cannot compare Chromium versions: installed "${installedVersion.trim()}", playwright-core expects ${expectedMajor ?? 'unknown'}`;
  if (installed === expectedMajor) return null;
  return `Chromium ${installed} at ${CHROMIUM} but playwright-core is pinned to the release for Chromium ${expectedMajor}: pin the playwright-core that bundles ${installed}`;
}

export async function launchBrowser(): Promise<Browser> {
  const drift = chromiumDrift(execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }), playwrightChromiumMajor());
  if (drift) process.stderr.write(`warning: ${drift}\n`);
  // Root in a container has no user namespace for Chromium's sandbox.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}

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
