import { build, stop } from 'esbuild';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { defaultDashboardDir, packageRoot } from './dashboard.paths';

/**
 * Bundles web/src into `outdir`: the page (one hashed script and stylesheet, and an index.html naming them), the page an
 * action link opens (action.html and its script), the service worker (`sw.js`: unhashed, since its URL is its identity
 * and its scope is the whole page), and web/public as it is (the manifest and the icons). Build time only: the page
 * fetches nothing at run time but its own API. Run by `npm run build` (so by `npm start`).
 */
export async function buildDashboard(outdir: string): Promise<string[]> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const web = join(packageRoot(), 'web');
  cpSync(join(web, 'public'), outdir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(web, 'src', 'main.tsx'), action: join(web, 'src', 'action-page.ts') },
    outdir,
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    metafile: true,
    // Inputs are listed relative to it.
    absWorkingDir: packageRoot(),
    logLevel: 'warning',
  });
  const worker = await build({
    entryPoints: { sw: join(web, 'src', 'sw.ts') },
    outdir,
    bundle: true,
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    metafile: true,
    absWorkingDir: packageRoot(),
    logLevel: 'warning',
  });
  // esbuild keeps its service process for later builds; there are none, and it would keep a test run from exiting.
  await stop();
  const server = serverCodeIn([...Object.keys(result.metafile.inputs), ...Object.keys(worker.metafile.inputs)]);
  if (server.length > 0) throw new Error(`the dashboard bundle took the service's code (${server.join(', ')}): the page imports the service's types only, with import type`);
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.startsWith('app-') && f.endsWith('.js'));
  const style = outputs.find((f) => f.startsWith('app-') && f.endsWith('.css'));
  const actionScript = outputs.find((f) => f.startsWith('action-') && f.endsWith('.js'));
  if (!script || !style || !actionScript) throw new Error(`the dashboard build made ${outputs.join(', ')}: expected a script and a stylesheet, and the action page's script`);
  writeFileSync(join(outdir, 'index.html'), indexHtml(script, style));
  writeFileSync(join(outdir, 'action.html'), actionHtml(actionScript, style));
  return ['index.html', 'action.html', 'sw.js', ...outputs];
}

/**
 * The bundle's inputs (paths relative to the package root, as esbuild lists them) that are the service's own source:
 * the page may import its types, which esbuild erases, never its code.
 */
function serverCodeIn(inputs: readonly string[]): string[] {
  return inputs.filter((input) => input.split(/[\\/]/)[0] === 'src');
}

const indexHtml = (script: string, style: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" content="#1f4b7a">
<title>Brainstem</title>
<link rel="manifest" href="/manifest.webmanifest">
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<link rel="apple-touch-icon" href="/icon-192.png">
<link rel="stylesheet" href="/${style}">
<script type="module" src="/${script}"></script>
</head>
<body><div id="app"><p class="booting">Loading…</p></div></body>
</html>
`;

/** The page an action link opens in a browser: it says what the link does and acts only when asked (web/src/action-page.ts). */
const actionHtml = (script: string, style: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Brainstem action</title>
<link rel="stylesheet" href="/${style}">
<script type="module" src="/${script}"></script>
</head>
<body><main class="action-page"><h1>Brainstem</h1><p id="what">Reading the link…</p><p><button type="button" id="act" class="primary" hidden></button></p><p id="result" role="status"></p></main></body>
</html>
`;

if (require.main === module) {
  buildDashboard(defaultDashboardDir()).then(
    (files) => process.stdout.write(`dashboard: built ${files.join(', ')}\n`),
    (e: unknown) => {
      process.stderr.write(`dashboard: build failed: ${(e as Error)?.message ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
