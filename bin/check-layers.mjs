#!/usr/bin/env node
/**
 * The layer check (`npm run check:layers`): the rules of .dependency-cruiser.cjs over lib/, handlers/, infra/
 * and bin/, then the circles between lib/ folders, which dependency-cruiser's rules cannot express (its
 * `circular` is between files: its rule `no-file-circle` keeps those at zero, over dashboard/src and local-cloud too).
 *
 * A folder here is what a reader of lib/ sees as one area: `lib/<name>/` with everything under it, or a file
 * directly in lib/. A circle is a set of folders each reaching every other through imports (a strongly
 * connected component of the folder graph). `--figures` prints the counts only, for measuring a branch;
 * `--order` prints the lib/ folders by depth (0: imports no other lib/ folder), as docs/architecture.md lists them.
 */
import { cruise } from 'dependency-cruiser';
import extractDepcruiseConfig from 'dependency-cruiser/config-utl/extract-depcruise-config';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const figuresOnly = process.argv.includes('--figures');
const printOrder = process.argv.includes('--order');
const ruleSet = await extractDepcruiseConfig('./.dependency-cruiser.cjs');
const cruised = await cruise(
  ['lib', 'handlers', 'infra', 'bin', 'local-cloud', 'dashboard/src'],
  { ...ruleSet.options, validate: true, ruleSet },
  undefined,
  {
    tsConfig: extractTSConfig(ruleSet.options.tsConfig.fileName),
  },
);
const { modules, summary } = cruised.output;

/** `lib/<name>/` for a file in a lib/ folder, the file itself directly in lib/, null outside lib/. */
function folderOf(path) {
  const match = /^lib\/([^/]+)(\/)?/.exec(path);
  if (!match) return null;
  return match[2] ? `lib/${match[1]}/` : `lib/${match[1]}`;
}

const edges = new Map();
const examples = new Map();
for (const module of modules) {
  const from = folderOf(module.source);
  if (!from) continue;
  if (!edges.has(from)) edges.set(from, new Set());
  for (const dependency of module.dependencies) {
    const to = folderOf(dependency.resolved);
    if (!to || to === from) continue;
    edges.get(from).add(to);
    const key = `${from} -> ${to}`;
    if (!examples.has(key)) examples.set(key, `${module.source} -> ${dependency.resolved}`);
  }
}

/** Tarjan's strongly connected components; those of more than one folder are circles. */
function circles() {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (folder) => {
    index.set(folder, next);
    low.set(folder, next);
    next++;
    stack.push(folder);
    onStack.add(folder);
    for (const to of edges.get(folder) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(folder, Math.min(low.get(folder), low.get(to)));
      } else if (onStack.has(to)) low.set(folder, Math.min(low.get(folder), index.get(to)));
    }
    if (low.get(folder) !== index.get(folder)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== folder);
    if (component.length > 1) found.push(component.sort());
  };
  for (const folder of [...edges.keys()].sort()) if (!index.has(folder)) visit(folder);
  return found;
}

const found = circles();
const violations = summary.violations.filter((v) => v.rule.severity === 'error');
const folderCount = edges.size;
const inCircles = found.reduce((sum, c) => sum + c.length, 0);
console.log(
  `layers: ${modules.length} modules, ${violations.length} forbidden imports; ${folderCount} lib/ folders, ` +
    `${found.length} folder circle(s) holding ${inCircles} folders`,
);
if (!figuresOnly) {
  for (const v of violations) console.log(`  forbidden (${v.rule.name}): ${v.from} -> ${v.to}`);
  for (const circle of found) {
    console.log(`  circle of ${circle.length}: ${circle.join(' ')}`);
    const members = new Set(circle);
    for (const from of circle) {
      for (const to of [...edges.get(from)].filter((t) => members.has(t)).sort()) {
        console.log(`    ${from} -> ${to}  (${examples.get(`${from} -> ${to}`)})`);
      }
    }
  }
}
if (printOrder && found.length === 0) {
  const depth = new Map();
  const depthOf = (folder) => {
    if (!depth.has(folder)) depth.set(folder, Math.max(-1, ...[...(edges.get(folder) ?? [])].map(depthOf)) + 1);
    return depth.get(folder);
  };
  const byDepth = [];
  for (const folder of [...edges.keys()].sort()) (byDepth[depthOf(folder)] ??= []).push(folder);
  for (const [level, folders] of byDepth.entries()) console.log(`  ${level}: ${folders.join(' ')}`);
}
if (violations.length > 0 || found.length > 0) process.exitCode = 1;
