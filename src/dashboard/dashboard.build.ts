import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { defaultDashboardDir, packageRoot } from './dashboard.paths';

/**
 * Bundles web/src into `outdir`: one hashed script and stylesheet, and an index.html naming them. Build time only:
 * the page fetches nothing at run time but its own API. Run by `npm run build` (so by `npm start`).
 */
export async function buildDashboard(outdir: string): Promise<string[]> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(packageRoot(), 'web', 'src', 'main.tsx') },
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
  const server = serverCodeIn(Object.keys(result.metafile.inputs));
  if (server.length > 0) throw new Error(`the dashboard bundle took the service's code (${server.join(', ')}): the page imports the service's types only, with import type`);
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  if (!script || !style) throw new Error(`the dashboard build made ${outputs.join(', ')}: expected a script and a stylesheet`);
  writeFileSync(join(outdir, 'index.html'), indexHtml(script, style));
  return ['index.html', ...outputs];
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
<title>Brainstem</title>
<link rel="stylesheet" href="/${style}">
<script type="module" src="/${script}"></script>
</head>
<body><div id="app"></div></body>
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
