#!/usr/bin/env node
// Builds the installable CLI, dist/cli.mjs (package.json "bin": slipway), from lib/cli/main.ts:
// minified ESM for Node 22, so `npx slipway` and a global install run plain `node`, with no
// TypeScript loader at run time. Run by `npm run build:cli` and by npm's `prepare` (install, pack).
//
// Split in chunks (dist/chunks/): a command loads only what it runs. The user commands load about
// 55 KB; the operator commands (admin), with the DynamoDB client, load theirs when asked for. One
// bundle of everything was 490 KB that every command parsed, half of a repeat deploy's start.
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist');
// Chunk names carry a content hash: the old ones would pile up.
rmSync(outdir, { recursive: true, force: true });
const built = await esbuild.build({
  entryPoints: { cli: join(root, 'lib', 'cli', 'main.ts') },
  outdir,
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
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
  // CommonJS dependencies call require() for Node built-ins; ESM has none, so each chunk makes one.
  banner: {
    js: "import { createRequire as __slipwayCreateRequire } from 'node:module'; const require = __slipwayCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  metafile: true,
});
chmodSync(join(outdir, 'cli.mjs'), 0o755);
// `slipway dev` starts each function instance on the runner, a program of its own read from a file
// with the modules it imports (lib/functions/hosts/local/runner-files.ts finds the folder beside the bundle).
mkdirSync(join(outdir, 'runner'), { recursive: true });
for (const file of ['runner.mjs', 'core.mjs', 'serve.mjs', 'setup.mjs', 'protocol.mjs'])
  copyFileSync(join(root, 'lib', 'functions', 'runner', file), join(outdir, 'runner', file));
// The repository files the bundle was made of (the runner's copies too): the tests run this CLI as a user runs it,
// and rebuild it first when one of these is newer than the bundle (test/support/cli.ts).
const runnerFiles = ['runner.mjs', 'core.mjs', 'serve.mjs', 'setup.mjs', 'protocol.mjs'].map((file) => `lib/functions/runner/${file}`);
const inputs = Object.keys(built.metafile.inputs).filter((file) => !file.startsWith('node_modules/'));
writeFileSync(join(outdir, 'cli-inputs.json'), `${JSON.stringify([...inputs, ...runnerFiles, 'bin/build-cli.mjs'])}\n`);
