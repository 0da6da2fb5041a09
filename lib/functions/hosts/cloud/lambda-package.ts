import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import type { BuildOptions } from 'esbuild';
import type { DeployedFunction } from '../../model.ts';

/** The runner's module in the layer (a layer's files land under /opt). */
export const RUNNER_LAYER_MODULE = '/opt/runner.mjs';

/**
 * The entry's bundle (lambda-entry.ts, built by esbuild with the runner's core left to the layer), put in the
 * bundles that make packages by infra/lambda-bundles.ts; absent when the sources run unbundled (tests, tsx).
 */
declare const SLIPWAY_LAMBDA_ENTRY: string | undefined;

/** The runner's core as the entry imports it; its bundle imports it from the layer instead. */
const CORE_IMPORT = '../../runner/runner.mjs';

/** What esbuild builds the entry with: one ES module; node built-ins and the runner's core external. */
export function lambdaEntryBuildOptions(): BuildOptions & { write: false } {
  return {
    entryPoints: [fileURLToPath(new URL('./lambda-entry.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    write: false,
    logLevel: 'warning',
    external: [`*${CORE_IMPORT.slice(5)}`],
  };
}

/** The built entry's text with the runner's core taken from the layer. */
export function lambdaEntryFromBuild(text: string): string {
  if (!text.includes(`"${CORE_IMPORT}"`)) throw new Error(`the Lambda entry's bundle does not import ${CORE_IMPORT}`);
  return text.replaceAll(`"${CORE_IMPORT}"`, JSON.stringify(RUNNER_LAYER_MODULE));
}

let built: string | null = null;

/** The source of every user-function Lambda's index.mjs: the bundled one, else built here once (esbuild, a dev dependency). */
export function lambdaEntrySource(): string {
  if (typeof SLIPWAY_LAMBDA_ENTRY === 'string') return SLIPWAY_LAMBDA_ENTRY;
  if (built === null) {
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    built = lambdaEntryFromBuild(esbuild.buildSync(lambdaEntryBuildOptions()).outputFiles[0]!.text);
  }
  return built;
}

/** The Lambda name of one built bundle: content-addressed, so a rollback reuses it and a rebuild makes a new one. */
export function functionLambdaName(prefix: string, fn: Pick<DeployedFunction, 'function_id' | 'bundle_sha256'>): string {
  const digest = createHash('sha256').update(`${fn.function_id}:${fn.bundle_sha256}`).digest('hex');
  return `${prefix}${digest}`.slice(0, 64);
}

/**
 * The `slipway:*` tags of a user-function Lambda: the sweep (lib/sweep.ts) finds the records that still name it
 * through the project (the team, on a Lambda made before the project was tagged).
 */
export function functionLambdaTags(
  fn: Pick<DeployedFunction, 'function_id' | 'team_id' | 'project_id' | 'bundle_sha256'>,
): Record<string, string> {
  return {
    'slipway:function-id': fn.function_id,
    'slipway:team-id': fn.team_id,
    'slipway:project-id': fn.project_id,
    'slipway:bundle-sha256': fn.bundle_sha256,
  };
}

/**
 * The deployment package of a user-function Lambda: the bundle and the entry
 * (lambda-entry.ts) that hands the invocation to the runner's core in the layer. A stored (not
 * deflated) zip: the bundle is at most 900 KB and Lambda takes up to 50 MB.
 */
export function functionPackage(bundle: Buffer): Buffer {
  return storedZip([
    { name: 'index.mjs', data: Buffer.from(lambdaEntrySource()) },
    { name: 'function.mjs', data: bundle },
  ]);
}

/** A zip archive of stored entries (no compression), readable by Lambda and `unzip`. */
export function storedZip(entries: { name: string; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(0, 10); // time, date: 1980-00-00, so a package's hash depends on its content only
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode below is read
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(0, 30); // extra, comment lengths
    central.writeUInt32LE(0, 34); // disk number, internal attributes
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // -rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const centralSize = centrals.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}
