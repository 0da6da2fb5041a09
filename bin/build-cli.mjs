#!/usr/bin/env node
// Builds the installable CLI, dist/cli.mjs (package.json "bin": slipway), from lib/cli/main.ts:
// one minified ESM file for Node 22, so `npx slipway` and a global install run plain `node`, with no
// TypeScript loader at run time. Run by `npm run build:cli` and by npm's `prepare` (install, pack).
import { chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(root, 'dist', 'cli.mjs');
await esbuild.build({
  entryPoints: [join(root, 'lib', 'cli', 'main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // esbuild ships a native binary: the CLI imports the installed package (a dependency) at run time.
  external: ['esbuild'],
  // CommonJS dependencies call require() for Node built-ins; ESM has none, so the banner makes one.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __slipwayCreateRequire } from 'node:module'; const require = __slipwayCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
