#!/usr/bin/env node
// Fails when a function holds more than 80 lines of code, as a reader sees them: blank lines and
// comment-only lines do not count, and a function nested in another (an arrow, a callback, a
// helper) counts inside the outermost one, whose whole span is measured. Run by `npm run checks`.
//
// Biome's noExcessiveLinesPerFunction can skip blank lines but not comment lines, and checks each
// nested function on its own; this walks the TypeScript syntax tree instead.
//
//   node bin/function-length.mjs            check, and list the longest functions
//   node bin/function-length.mjs --top 30   list more of them
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_LINES = 80;
// Spans up to this many lines are listed by span alone (never long, and below the longest listed).
const SHORT = 50;
const ROOTS = ['lib', 'handlers', 'infra', 'bin', 'dashboard/src', 'local-cloud'];
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const topArg = process.argv.indexOf('--top');
const top = topArg > 0 ? Number(process.argv[topArg + 1]) : 5;

function* sourceFiles(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return; // a root that does not exist (yet)
  }
  for (const name of names) {
    if (name === 'node_modules' || name === 'dist' || name === 'cdk.out') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

// The lines of a function holding a token: the lines a reader sees code on.
function codeLines(file, fn) {
  const lines = new Set();
  const text = file.text;
  const visit = (node) => {
    if (ts.isJSDoc(node)) return;
    if (node.kind > ts.SyntaxKind.LastToken) {
      for (const child of node.getChildren(file)) visit(child);
      return;
    }
    const start = node.getStart(file);
    const first = file.getLineAndCharacterOfPosition(start).line;
    const segments = text.slice(start, node.end).split('\n');
    segments.forEach((segment, i) => {
      if (segment.trim() !== '') lines.add(first + i);
    });
  };
  visit(fn);
  return lines.size;
}

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) {
    const owner = node.parent && ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : '';
    return owner + node.name.text;
  }
  if (ts.isConstructorDeclaration(node) && node.parent.name) return `${node.parent.name.text}.constructor`;
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    ts.isIdentifier(parent.name)
  ) {
    return parent.name.text;
  }
  return null;
}

function measure(path) {
  const text = readFileSync(path, 'utf8');
  const kind = path.endsWith('x') ? ts.ScriptKind.TSX : path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const span = file.getLineAndCharacterOfPosition(node.end).line - first + 1;
      // Walking every token is the slow part: a short span is short in code lines too.
      const count = span > SHORT ? codeLines(file, node) : span;
      const name = nameOf(node) ?? `<function at line ${first + 1}>`;
      found.push({ path: relative(root, path), name, line: first + 1, count });
      return; // nested functions count inside this one
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const all = ROOTS.flatMap((dir) => [...sourceFiles(join(root, dir))].flatMap(measure)).sort((a, b) => b.count - a.count);
const long = all.filter((f) => f.count > MAX_LINES);

console.log(`function length: ${long.length} over ${MAX_LINES} lines of code; the longest:`);
for (const f of all.slice(0, top)) console.log(`  ${String(f.count).padStart(4)}  ${f.path}:${f.line} ${f.name}`);
for (const f of long)
  console.error(`${f.path}:${f.line}: ${f.name} holds ${f.count} lines of code (at most ${MAX_LINES}): split it in named stages`);
if (long.length > 0) process.exit(1);
