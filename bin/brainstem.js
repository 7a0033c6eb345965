#!/usr/bin/env node
'use strict';
// Runs the compiled CLI. An installed package (npm install -g of the packed tarball) carries only the build. In a clone,
// the build runs when it is of the current sources, otherwise the TypeScript source through swc (a build left from
// before a change would run old code); `serve` builds first, as npm start does.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const argv = process.argv.slice(2);
const compiled = () => require(join(root, 'dist', 'src', 'cli', 'main.js'));

let cli;
if (!existsSync(join(root, 'src'))) {
  cli = compiled();
} else {
  const state = require('../scripts/build-state');
  if (argv[0] === 'serve') state.buildIfStale();
  if (state.isBuildCurrent()) {
    cli = compiled();
  } else {
    require('@swc-node/register');
    cli = require(join(root, 'src', 'cli', 'main.ts'));
  }
}
cli.main(argv).then(
  // null: the command keeps running (the service), and ends the process itself.
  (code) => code !== null && process.exit(code),
  (e) => {
    process.stderr.write(`brainstem: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
