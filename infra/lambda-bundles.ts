import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import type { Metafile } from 'esbuild';
import { fallbackRoute, routes, type RouteRow } from '../lib/http/routes.ts';
import { withFileLockSync } from '../lib/local/file-lock.ts';
import { workers } from '../lib/workers.ts';
import {
  bundledRouteValue,
  bundledRouteVariable,
  externalModulesFor,
  lambdaEntryDefine,
  repoRoot,
  routeRowWidth,
  sharedEsbuildOptions,
} from './bundling.ts';

/**
 * Every Lambda bundle, made by one esbuild build per set of external modules
 * (the AWS SDK and the rest parsed once for all handlers, where one `npx
 * esbuild` per Lambda parsed them again 90-odd times: minutes per synth), and
 * kept with the digest of every file the build read: a synth whose inputs did
 * not change copies the bundles the last one made. The folder sits two levels
 * below the repository, as CDK's cdk.out/bundling-temp-* does, so the source
 * maps' relative paths are those CDK's own bundling wrote.
 */
export const bundlesRoot = path.join(repoRoot, '.lambda-bundles');
const manifestFile = 'manifest.json';
const metafileFile = 'metafile.json';

interface Manifest {
  key: string;
  /** Each file the build read (relative to the repository), with the SHA-256 of its content. */
  inputs: Record<string, string>;
}

/** The built bundles: each handler's folder (index.mjs and its map), and what esbuild says went into each. */
export interface LambdaBundles {
  folderOf(handler: string): string;
  metafile: { inputs: Metafile['inputs']; outputs: Record<string, Metafile['outputs'][string]> };
}

/**
 * Every handler file the stack bundles: the route rows, the $default route, the
 * workers (a container image's too, whose bundle the tests check though its
 * image is built from the sources) and the edge handlers behind CloudFront.
 */
export function lambdaHandlers(): string[] {
  const edgeDir = path.join(repoRoot, 'handlers', 'edge');
  const edge = fs
    .readdirSync(edgeDir)
    .filter((file) => file.endsWith('.ts') && !file.includes('.test.'))
    .map((file) => `handlers/edge/${file}`);
  return [
    ...new Set([
      ...(routes as readonly RouteRow[]).map((row) => row.handler),
      fallbackRoute.handler,
      ...workers.map((row) => row.handler),
      ...edge,
    ]),
  ];
}

const folderName = (handler: string) =>
  handler
    .replace(/^handlers\//, '')
    .replace(/\.ts$/, '')
    .replaceAll('/', '.');

/**
 * The key whose bundles this process has checked or built: a synth asks once per Lambda, and the inputs are
 * hashed only on the first ask.
 */
let checkedKey: string | null = null;

/** The bundles of the current sources: reused when every input is unchanged, else built (once, if processes ask at once). */
export function lambdaBundles(): LambdaBundles {
  const handlers = lambdaHandlers();
  const key = buildKey(handlers);
  if (checkedKey !== key && !isCurrent(key)) withFileLockSync(`${bundlesRoot}.lock`, () => isCurrent(key) || build(handlers, key));
  checkedKey = key;
  const metafile = JSON.parse(fs.readFileSync(path.join(bundlesRoot, metafileFile), 'utf8')) as LambdaBundles['metafile'];
  return {
    metafile,
    folderOf(handler) {
      if (!handlers.includes(handler))
        throw new Error(`${handler} is not a Lambda handler of the stack (infra/lambda-bundles.ts lambdaHandlers)`);
      return path.join(bundlesRoot, folderName(handler));
    },
  };
}

/** What the bundles are made with besides the files esbuild reads: options, the Lambda entry, handler list, esbuild's version, the lockfile. */
function buildKey(handlers: string[]): string {
  // The Lambda entry is built apart (a define of every bundle): its text stands for the files it was built from.
  const hash = createHash('sha256')
    .update(esbuild.version)
    .update(JSON.stringify(sharedEsbuildOptions))
    .update(JSON.stringify(lambdaEntryDefine()));
  for (const handler of handlers) hash.update(JSON.stringify([handler, externalModulesFor(handler), bundledRouteValue(handler)]));
  for (const file of ['package-lock.json', 'tsconfig.json']) hash.update(fs.readFileSync(path.join(repoRoot, file)));
  return hash.digest('hex');
}

const fileDigest = (file: string) =>
  createHash('sha256')
    .update(fs.readFileSync(path.join(repoRoot, file)))
    .digest('hex');

function isCurrent(key: string): boolean {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(bundlesRoot, manifestFile), 'utf8')) as Manifest;
  } catch {
    return false;
  }
  if (manifest.key !== key) return false;
  try {
    return Object.entries(manifest.inputs).every(([file, digest]) => fileDigest(file) === digest);
  } catch {
    return false; // an input that is gone
  }
}

/**
 * One build per set of external modules and per kind (route bundles carry a
 * route row): every route bundle is built with one placeholder of the rows'
 * common width (infra/bundling.ts routeRowWidth), then gets its own row
 * written over it. Built beside the folder and moved in whole.
 */
function build(handlers: string[], key: string): true {
  const started = performance.now();
  const temp = `${bundlesRoot}.building`;
  fs.rmSync(temp, { recursive: true, force: true });
  const groups = new Map<string, string[]>();
  for (const handler of handlers) {
    const group = JSON.stringify([externalModulesFor(handler), bundledRouteValue(handler) !== null]);
    groups.set(group, [...(groups.get(group) ?? []), handler]);
  }
  const metafile: LambdaBundles['metafile'] = { inputs: {}, outputs: {} };
  for (const [group, entries] of groups) {
    const [external, carriesRoute] = JSON.parse(group) as [string[], boolean];
    const placeholder = carriesRoute ? routePlaceholder : null;
    const result = esbuild.buildSync({
      ...sharedEsbuildOptions,
      entryPoints: entries.map((handler) => ({ in: path.join(repoRoot, handler), out: `${folderName(handler)}/index` })),
      outdir: temp,
      outExtension: { '.js': '.mjs' },
      external,
      define: { ...lambdaEntryDefine(), ...(placeholder ? { [bundledRouteVariable]: JSON.stringify(placeholder) } : {}) },
      metafile: true,
    });
    Object.assign(metafile.inputs, result.metafile!.inputs);
    for (const output of Object.values(result.metafile!.outputs)) if (output.entryPoint) metafile.outputs[output.entryPoint] = output;
    if (placeholder) for (const handler of entries) writeRouteRow(path.join(temp, folderName(handler), 'index.mjs'), handler, placeholder);
  }
  const inputs = Object.fromEntries(Object.keys(metafile.inputs).map((file) => [file, fileDigest(file)]));
  fs.writeFileSync(path.join(temp, metafileFile), JSON.stringify(metafile));
  fs.writeFileSync(path.join(temp, manifestFile), JSON.stringify({ key, inputs } satisfies Manifest));
  fs.rmSync(bundlesRoot, { recursive: true, force: true });
  fs.renameSync(temp, bundlesRoot);
  process.stderr.write(
    `Built ${handlers.length} Lambda bundles in ${((performance.now() - started) / 1000).toFixed(1)} s (${bundlesRoot})\n`,
  );
  return true;
}

/** A string as long as every route row's value (routeRowWidth), found in no source. */
const routePlaceholder = 'SLIPWAY_BUNDLED_ROUTE_'.padEnd(routeRowWidth, '_');

/**
 * Writes the handler's row where the placeholder is, as the literal esbuild
 * prints for it in a build of that handler alone: single-quoted, since the
 * row's JSON holds double quotes and (checked here) nothing that needs escaping.
 */
function writeRouteRow(file: string, handler: string, placeholder: string): void {
  const value = bundledRouteValue(handler)!;
  if (!/^[\x20-\x7e]*$/.test(value) || /['\\]/.test(value))
    throw new Error(`The route row of ${handler} needs escaping in a bundle: ${value}`);
  const code = fs.readFileSync(file, 'utf8').replaceAll(`"${placeholder}"`, `'${value}'`);
  if (code.includes(placeholder)) throw new Error(`The bundle of ${handler} holds the route placeholder in a form not written over`);
  fs.writeFileSync(file, code);
}
