// Builds the console into dashboard/dist with the repository's own esbuild:
// no network, no extra tool. Bundles are named by content hash under assets/,
// so they can be cached for ever; index.html names the current ones.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');

export async function buildDashboard({ quiet = false } = {}) {
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  const result = await build({
    entryPoints: { app: join(here, 'src', 'main.tsx'), styles: join(here, 'src', 'styles.css') },
    outdir: join(dist, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome111', 'firefox114', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: quiet ? 'error' : 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.startsWith('app-') && f.endsWith('.js'));
  const css = outputs.find((f) => f.startsWith('styles-') && f.endsWith('.css'));
  const html = readFileSync(join(here, 'index.html'), 'utf8').replace('%JS%', `/assets/${js}`).replace('%CSS%', `/assets/${css}`);
  writeFileSync(join(dist, 'index.html'), html);
  if (!quiet) process.stdout.write(`dashboard built: dist/assets/${js}, dist/assets/${css}\n`);
  return { js: join(dist, 'assets', js), css: join(dist, 'assets', css) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildDashboard();
}
