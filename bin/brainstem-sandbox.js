#!/usr/bin/env node
'use strict';
// The launcher of one sandboxed worker (src/sandbox-launcher.ts), started by the service only: the build when
// it is of the current sources, else the TypeScript source through swc, as bin/brainstem.js does.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
if (!existsSync(join(root, 'src')) || require('../scripts/build-state').isBuildCurrent()) {
  require(join(root, 'dist', 'src', 'sandbox-launcher.js'));
} else {
  require('@swc-node/register');
  require(join(root, 'src', 'sandbox-launcher.ts'));
}
