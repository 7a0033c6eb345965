// Whether dist/ holds a build of the current sources: compiled after the newest file under src/ and web/ (a
// directory's own mtime counts too, so deleting or renaming a file does), the tsconfigs and the lockfile.
'use strict';
const { readdirSync, statSync } = require('node:fs');
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

module.exports = { root, stamp, isBuildCurrent };
