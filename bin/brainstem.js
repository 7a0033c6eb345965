#!/usr/bin/env node
'use strict';
// Runs the compiled CLI when the project is built, otherwise the TypeScript source through swc.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const compiled = join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
let cli;
if (existsSync(compiled)) {
  cli = require(compiled);
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
