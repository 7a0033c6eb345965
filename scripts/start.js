// npm start: compiles (the service, then the dashboard) only when a source changed since the last build (scripts/build-state.js),
// then runs the service in this process (no second node to start).
'use strict';
const { join } = require('node:path');
const { root, buildIfStale } = require('./build-state');

buildIfStale();
require(join(root, 'dist', 'src', 'main.js'));
