#!/usr/bin/env node
'use strict';
// Runs the compiled CLI. An installed package (npm install -g of the packed tarball) carries only the build. In a clone,
// the build runs when it is of the current sources, otherwise the TypeScript source through swc (a build left from
// before a change would run old code); `serve` builds first, as npm start does.
const { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

const root = join(__dirname, '..');
const argv = process.argv.slice(2);
const compiled = () => require(join(root, 'dist', 'src', 'cli', 'main.js'));

/**
 * `brainstem hook <event>` runs inside the user's claude on every event: it loads its own file alone (it imports only
 * Node's modules), never the rest of the command line, so claude is not slowed. In a clone whose build is older than
 * that file, the file alone is compiled once into dist/ (written beside and renamed, as hooks may run at once), and the
 * next events load that.
 */
function hookModule() {
  const source = join(root, 'src', 'cli', 'claude-hook.ts');
  const built = join(root, 'dist', 'src', 'cli', 'claude-hook.js');
  const mtime = (p) => {
    try {
      return statSync(p).mtimeMs;
    } catch {
      return -1;
    }
  };
  if (mtime(source) < 0 || mtime(built) >= mtime(source)) return require(built);
  const { transformSync } = require('@swc/core');
  const options = { filename: source, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } };
  const code = transformSync(readFileSync(source, 'utf8'), options).code;
  try {
    mkdirSync(dirname(built), { recursive: true });
    const temp = `${built}.${process.pid}.tmp`;
    writeFileSync(temp, code);
    renameSync(temp, built);
    return require(built);
  } catch {
    // A build folder it cannot write to: compiled for this event only.
    const Module = require('node:module');
    const m = new Module(source, module);
    m.filename = source;
    m._compile(code, source);
    return m.exports;
  }
}

if (argv[0] === 'hook') {
  hookModule().runHookProcess(argv.slice(1));
} else {
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
}
