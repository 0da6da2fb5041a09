import { readdir, stat } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import type { Metafile } from 'esbuild';
import type { SiteFile } from './site-file.ts';

/**
 * The npm packages a folder's functions import. `slipway deploy` skips
 * node_modules/ (a site never ships it), but the platform builds functions
 * from the deployment's own files: so the CLI bundles the function entries
 * locally (esbuild, nothing written) and adds exactly the node_modules files
 * the bundles read, plus the package.json files esbuild needs to resolve those
 * packages again on the server. A package no function imports is not sent.
 *
 * The functions live in `{root_directory}functions/` when the project has a
 * root directory (the platform's build looks there, and in
 * `{root_directory}node_modules/`), or in the app's functions/ beside a build
 * folder: lib/cli/function-sources.ts says where, and they are bundled from there.
 *
 * The platform's build sees plain files, no symbolic links. A package manager
 * that links packages into node_modules (pnpm: `node_modules/a` links to
 * `node_modules/.pnpm/a@1/node_modules/a`, whose own dependencies are links
 * beside it) is followed as Node follows it, and each package is sent where a
 * plain-file resolution from its importer finds it: at `node_modules/{name}`
 * when that place is free or holds the same package, else in the importer's
 * own `node_modules/`. A tree of plain folders (npm, yarn) is sent as it is.
 */
export interface FunctionDependencies {
  /** node_modules files to add to the manifest. */
  files: Omit<SiteFile, 'hash'>[];
  /** What the local bundling could not settle; the platform's build has the last word. */
  warnings: string[];
}

/** Entry points as the platform finds them: .js and .ts files directly in functions/ (declaration files aside). */
async function functionEntryFiles(base: string): Promise<string[]> {
  const entries = await readdir(join(base, 'functions'), { withFileTypes: true }).catch(() => null);
  if (!entries) return [];
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && /\.(js|ts)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => `functions/${e.name}`)
    .sort();
}

const isFile = (absolute: string) =>
  stat(absolute).then(
    (s) => s.isFile(),
    () => false,
  );

/** The package folder a path is in (`…/node_modules/name` or `…/node_modules/@scope/name`), or null outside node_modules. */
export function packageRootOf(path: string): string | null {
  const at = path.lastIndexOf('node_modules/');
  if (at < 0 || (at > 0 && path[at - 1] !== '/')) return null;
  const rest = path.slice(at + 'node_modules/'.length).split('/');
  const length = rest[0]!.startsWith('@') ? 2 : 1;
  if (rest.length <= length) return null;
  return path.slice(0, at) + ['node_modules', ...rest.slice(0, length)].join('/');
}

const packageName = (root: string) => root.slice(root.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** The `node_modules/{name}` places a plain-file resolution looks at from `dir`, nearest first. */
function lookupSlots(dir: string, name: string): string[] {
  const slots: string[] = [];
  for (let d = dir; ; d = posix.dirname(d)) {
    if (posix.basename(d) !== 'node_modules') slots.push(d === '.' ? `node_modules/${name}` : `${d}/node_modules/${name}`);
    if (d === '.' || d === '/' || d === '') break;
  }
  return slots;
}

/**
 * Where package `real` (a package folder as esbuild resolved it) goes for an importer at `fromDir`: the
 * nearest place that already holds it, or where it already is when nothing nearer stands in the way, or the
 * top `node_modules/`; when another package of that name is found first, the nearest place.
 */
function placePackage(placed: Map<string, string>, fromDir: string, real: string): string {
  const slots = lookupSlots(fromDir, packageName(real));
  for (const slot of slots) {
    const holder = placed.get(slot);
    if (holder === real) return slot;
    if (holder !== undefined) {
      placed.set(slots[0]!, real);
      return slots[0]!;
    }
    if (slot === real) {
      placed.set(slot, real);
      return slot;
    }
  }
  const top = slots.at(-1)!;
  placed.set(top, real);
  return top;
}

type Inputs = Metafile['inputs'];

/** Every input the bundles read, each at the path (relative to the base) it is sent to: `logical -> real`. */
function layOut(inputs: Inputs, entries: string[], warnings: string[]): Map<string, string> {
  const sent = new Map<string, string>();
  const placed = new Map<string, string>();
  const queue: [real: string, logical: string][] = entries.filter((e) => inputs[e]).map((e) => [e, e]);
  for (const [real, logical] of queue) {
    if (sent.has(logical)) continue;
    sent.set(logical, real);
    const realPackage = packageRootOf(real);
    const logicalPackage = realPackage === null ? null : logical.slice(0, logical.length - (real.length - realPackage.length));
    for (const imported of inputs[real]?.imports ?? []) {
      const target = imported.path;
      // Built-ins stay external; esbuild names virtual modules with a namespace prefix.
      if (imported.external || target.includes(':') || !inputs[target]) continue;
      const targetPackage = packageRootOf(target);
      if (targetPackage === null) {
        if (target.startsWith('../')) {
          warnings.push(`functions: ${target} is outside the functions' folder and is not sent; the platform's build will not find it.`);
        } else queue.push([target, target]);
      } else if (targetPackage === realPackage) {
        queue.push([target, logicalPackage! + target.slice(realPackage.length)]);
      } else {
        const slot = placePackage(placed, posix.dirname(logical), targetPackage);
        queue.push([target, slot + target.slice(targetPackage.length)]);
      }
    }
  }
  return sent;
}

/**
 * Every package.json from each sent file's folder up to its package folder (package roots: main, exports;
 * nested ones: "type", "sideEffects"), which resolving the same import on the server reads again.
 */
async function packageJsons(base: string, sent: Map<string, string>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const [logical, real] of sent) {
    const realPackage = packageRootOf(real);
    if (realPackage === null) continue;
    const logicalPackage = logical.slice(0, logical.length - (real.length - realPackage.length));
    for (let folder = posix.dirname(real); folder.length >= realPackage.length; folder = posix.dirname(folder)) {
      const at = `${logicalPackage}${folder.slice(realPackage.length)}/package.json`;
      if (!found.has(at) && !sent.has(at) && (await isFile(join(base, folder, 'package.json')))) found.set(at, `${folder}/package.json`);
      if (folder === realPackage) break;
    }
  }
  return found;
}

/** The node_modules files the functions of `base` (the folder holding functions/) import, at paths relative to it. */
export async function functionDependencies(base: string): Promise<FunctionDependencies> {
  const entries = await functionEntryFiles(base);
  if (entries.length === 0) return { files: [], warnings: [] };
  const esbuild = await import('esbuild');
  let inputs: Inputs;
  try {
    const result = await esbuild.build({
      absWorkingDir: base,
      entryPoints: entries.map((entry) => join(base, entry)),
      outdir: join(base, '.slipway-functions-out'),
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      external: ['node:*', ...builtinModules],
      metafile: true,
      write: false,
      logLevel: 'silent',
      tsconfigRaw: '{}',
    });
    inputs = result.metafile.inputs;
  } catch (error) {
    const messages = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors;
    if (!Array.isArray(messages)) throw error;
    // The platform's build reports the same errors, as the deploy's build log.
    return {
      files: [],
      warnings: messages.map((m) => `functions: ${m.location ? `${m.location.file}:${m.location.line}: ` : ''}${m.text}`),
    };
  }

  const warnings: string[] = [];
  const sent = layOut(inputs, entries, warnings);
  const wanted = new Map<string, string>();
  for (const [logical, real] of sent) if (packageRootOf(real) !== null) wanted.set(logical, real);
  for (const [logical, real] of await packageJsons(base, wanted)) wanted.set(logical, real);
  const files = await Promise.all(
    [...wanted.keys()].sort().map(async (logical) => {
      const absolute = join(base, wanted.get(logical)!);
      return { path: logical, absolute, size: (await stat(absolute)).size };
    }),
  );
  return { files, warnings };
}
