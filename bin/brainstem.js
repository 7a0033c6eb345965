#!/usr/bin/env node
'use strict';
// Runs the compiled CLI when the build is of the current sources, otherwise the TypeScript source through swc (a build
// left from before a change would run old code).
const { join } = require('node:path');
const { isBuildCurrent } = require('../scripts/build-state');

let cli;
if (isBuildCurrent()) {
  cli = require(join(__dirname, '..', 'dist', 'src', 'cli', 'main.js'));
} else {
  require('@swc-node/register');
  cli = require(join(__dirname, '..', 'src', 'cli', 'main.ts'));
}
cli.main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`brainstem: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
