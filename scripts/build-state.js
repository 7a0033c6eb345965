// Whether dist/ holds a build of the current sources: compiled after the newest file under src/ and web/ (a
// directory's own mtime counts too, so deleting or renaming a file does), the tsconfigs and the lockfile. And the
// build itself, for npm start, `brainstem serve` in a clone and npm pack.
'use strict';
const { execFileSync } = require('node:child_process');
const { readdirSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');

const mtimeOf = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

function newestSource(dir) {
  let newest = mtimeOf(dir);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(ts|tsx|css|html)$/.test(entry.name) && !entry.name.endsWith('.spec.ts')) newest = Math.max(newest, mtimeOf(path));
  }
  return newest;
}

function isBuildCurrent() {
  const sources = Math.max(newestSource(join(root, 'src')), newestSource(join(root, 'web')), ...['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((f) => mtimeOf(join(root, f))));
  return mtimeOf(join(root, 'dist', 'src', 'main.js')) >= 0 && mtimeOf(stamp) >= sources;
}

/** Compiles the service, then the dashboard, and stamps the build; a failed compile exits with tsc's code (tsc printed why). */
function build() {
  // Stamped with the time the build started: a source saved during the build is newer, and the next start builds again.
  const started = new Date();
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    // The dashboard's bundle (web/ → dist/web), built by the script tsc has just compiled.
    execFileSync(process.execPath, [join(root, 'dist', 'src', 'dashboard', 'dashboard.build.js')], { cwd: root, stdio: 'inherit' });
  } catch (e) {
    process.exit(typeof e.status === 'number' ? e.status : 1);
  }
  writeFileSync(stamp, '');
  utimesSync(stamp, started, started);
}

/** Builds only when a source changed since the last build, so a start of an unchanged tree does not wait for tsc. */
function buildIfStale() {
  if (!isBuildCurrent()) build();
}

module.exports = { root, stamp, isBuildCurrent, build, buildIfStale };
