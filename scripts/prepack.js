// npm pack (and publish): a clean build into dist/, so the tarball carries the compiled service and the dashboard's
// bundle of exactly these sources, and nothing a removed source left behind.
'use strict';
const { rmSync } = require('node:fs');
const { join } = require('node:path');
const { root, build } = require('./build-state');

rmSync(join(root, 'dist'), { recursive: true, force: true });
build();
