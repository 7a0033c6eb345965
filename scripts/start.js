// npm start: compiles (the service, then the dashboard) only when a source changed since the last build (scripts/build-state.js), so a
// start of an unchanged tree does not wait for tsc, then runs the service in this process (no second node to start).
'use strict';
const { execFileSync } = require('node:child_process');
const { utimesSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { root, stamp, isBuildCurrent } = require('./build-state');

if (!isBuildCurrent()) {
  // Stamped with the time the build started: a source saved during the build is newer, and the next start builds again.
  const started = new Date();
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    // The dashboard's bundle (web/ → dist/web), built by the script tsc has just compiled.
    execFileSync(process.execPath, [join(root, 'dist', 'src', 'dashboard', 'dashboard.build.js')], { cwd: root, stdio: 'inherit' });
  } catch (e) {
    // tsc has printed its errors; the start stops here, with tsc's exit code.
    process.exit(typeof e.status === 'number' ? e.status : 1);
  }
  writeFileSync(stamp, '');
  utimesSync(stamp, started, started);
}

require(join(root, 'dist', 'src', 'main.js'));
