import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Browser, chromium } from 'playwright-core';

// The Chromium the browser specs and the dashboard bench drive (no jest globals here: the bench imports it).

/** Debian's Chromium (`apt-get install chromium`), which .ci/run installs; BRAINSTEM_CHROMIUM names another. */
export const CHROMIUM = process.env.BRAINSTEM_CHROMIUM ?? '/usr/bin/chromium';

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
