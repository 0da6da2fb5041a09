#!/usr/bin/env node
// Fails when production code reaches the AWS emulator: a file of handlers/, infra/ or lib/ (lib/local/ aside, the
// local platform that starts it) that imports local-cloud/, directly or through the files it imports. Run by
// `npm run checks`. Deployed Lambdas, the CDK app and the CLI must never carry the emulator (it holds the IAM
// simulator, AGPL-licensed, and assumes loopback everywhere). Every relative import counts, `import type` and
// `import()` included: a type-only import is harmless in a bundle, but it still ties the layers together.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const EMULATOR = 'local-cloud';
const PRODUCTION = ['handlers', 'infra', 'lib'];
const ALLOWED = ['lib/local'];
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function within(path, folder) {
  return path === folder || path.startsWith(`${folder}/`);
}

function sourceFiles(root, dir) {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(root, path);
    return SOURCE.test(entry.name) && !entry.name.includes('.test.') ? [path] : [];
  });
}

/** The repository-relative files a source file imports by relative path (those that exist). */
function importsOf(root, file) {
  const text = readFileSync(join(root, file), 'utf8');
  const found = [];
  for (const [, specifier] of text.matchAll(SPECIFIER)) {
    const target = posix.normalize(posix.join(posix.dirname(file), specifier));
    const candidates = [target, `${target}.ts`, `${target}/index.ts`];
    const hit = candidates.find((path) => existsSync(join(root, path)) && statSync(join(root, path)).isFile());
    if (hit) found.push(hit);
  }
  return found;
}

/**
 * Each production file that reaches the emulator, with the chain of imports that gets there (shortest first
 * found). An empty list means production code never imports local-cloud/.
 */
export function emulatorImports(root) {
  const production = PRODUCTION.flatMap((dir) => sourceFiles(root, dir)).filter((file) => !ALLOWED.some((dir) => within(file, dir)));
  const graph = new Map();
  const importsCached = (file) => {
    if (!graph.has(file)) graph.set(file, importsOf(root, file));
    return graph.get(file);
  };
  const violations = [];
  for (const start of production) {
    const cameFrom = new Map([[start, null]]);
    const queue = [start];
    let reached = null;
    while (queue.length > 0 && !reached) {
      const file = queue.shift();
      for (const next of importsCached(file)) {
        if (cameFrom.has(next)) continue;
        cameFrom.set(next, file);
        if (within(next, EMULATOR)) {
          reached = next;
          break;
        }
        queue.push(next);
      }
    }
    if (!reached) continue;
    const chain = [];
    for (let file = reached; file; file = cameFrom.get(file)) chain.unshift(file);
    violations.push(chain);
  }
  return violations;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = relative(process.cwd(), join(dirname(fileURLToPath(import.meta.url)), '..')) || '.';
  const violations = emulatorImports(root);
  for (const chain of violations) console.error(`${chain[0]} reaches the emulator: ${chain.join(' -> ')}`);
  if (violations.length > 0) {
    console.error(`${violations.length} production file(s) import ${EMULATOR}/; only lib/local/ and test/ may.`);
    process.exit(1);
  }
}
