import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pLimit from 'p-limit';
import type { BuildFailure, Message, Metafile } from 'esbuild';
import { getObject, putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import {
  FUNCTION_NAME_PATTERN,
  MAX_FUNCTION_BUNDLE_BYTES,
  MAX_FUNCTION_LABEL_LENGTH,
  functionBundleKey,
  functionLabel,
  type FunctionRecord,
} from './model.ts';
import { claimFunctionHostnames } from './hostname-claim-records.ts';
import { rootPrefix } from '../sites/root-directory.ts';
import { functionIdFor } from './records.ts';
import { parseSchedule, schedulerCron } from './schedule.ts';
import { readScheduleConfig } from './schedule-config.ts';

/**
 * Build at publish (spec "Function"): every .js or .ts file directly in the
 * deployment's `functions/` directory (inside the project's root directory when
 * one is set) is bundled by esbuild into one ES module, from the files of the
 * deployment itself: its `functions/**` (subdirectories are shared code) and
 * its `node_modules/**`. Node built-ins stay external; TypeScript types are
 * stripped, never checked. Every build-log line starts with `[functions]`.
 *
 * esbuild is imported when a deployment has functions, by a specifier held in
 * a variable, so no bundler follows it: the handlers whose bundles include
 * this module (finalize, serve-site, the expiry worker) never carry esbuild,
 * and the finalize Lambda ships the esbuild package and its platform binary in
 * its node_modules.
 */

export const INVALID_NAME_LINE = '[functions] Build failed: invalid function name';

const ESBUILD = 'esbuild';
const loadEsbuild = () => import(ESBUILD) as Promise<typeof import('esbuild')>;

/** Lets CommonJS packages that `require` a built-in work inside the ES module. */
const BANNER = "import {createRequire} from 'node:module'; const require = createRequire(import.meta.url);";
/** Files fetched from the sites bucket at once. */
const FETCH_CONCURRENCY = 32;
/** Largest inputs named when a bundle is over the limit. */
const LARGEST_INPUTS_SHOWN = 5;

/** Manifest paths under `{root}functions/` and `{root}node_modules/`: what the build reads, and what is never served. */
export function isFunctionsSource(path: string, root: string): boolean {
  return path.startsWith(`${root}functions/`) || path.startsWith(`${root}node_modules/`);
}

export interface FunctionEntry {
  name: string;
  /** Manifest path, `{root}functions/{name}.{js,ts}`. */
  path: string;
}

/**
 * The entry points among manifest paths: files directly in `{root}functions/`
 * ending in .js or .ts (declaration files `.d.ts` hold no code and are not
 * functions). `problems` names each file whose name breaks the rule and each
 * name a .js and a .ts file share.
 */
export function functionEntries(paths: Iterable<string>, root: string): { entries: FunctionEntry[]; problems: string[] } {
  const dir = `${root}functions/`;
  const byName = new Map<string, string[]>();
  const problems: string[] = [];
  for (const path of paths) {
    if (!path.startsWith(dir)) continue;
    const file = path.slice(dir.length);
    if (file.includes('/') || !/\.(js|ts)$/.test(file) || file.endsWith('.d.ts')) continue;
    const name = file.slice(0, -3);
    if (!FUNCTION_NAME_PATTERN.test(name)) {
      problems.push(
        `[functions]   ${path}: "${name}" is not a function name (lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 128 characters)`,
      );
      continue;
    }
    byName.set(name, [...(byName.get(name) ?? []), path]);
  }
  const entries: FunctionEntry[] = [];
  for (const [name, files] of [...byName.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (files.length > 1) problems.push(`[functions]   ${files.sort().join(' and ')}: a .js and a .ts file share the name "${name}"`);
    else entries.push({ name, path: files[0]! });
  }
  return { entries, problems };
}

export const formatBytes = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} KB`;

export interface FunctionsBuildInput {
  teamId: string;
  projectId: string;
  deploymentId: string;
  subdomain: string;
  rootDirectory: unknown;
  /** Every manifest path of the deployment. */
  paths: string[];
  /** The sites-bucket key holding a manifest path's bytes (its own folder, or the earlier deployment it references). */
  objectKey: (path: string) => string;
}

export interface BuiltFunction {
  name: string;
  entry_path: string;
  code: Uint8Array;
  schedule: string | null;
}

/**
 * A function file's `config.schedule`, read from its text without running it, checked: the expression, or the
 * build-log line that fails the build, naming the function and the expression.
 */
export function functionSchedule(name: string, source: string): { schedule: string | null } | { line: string } {
  const read = readScheduleConfig(source);
  if (!read.ok) return { line: `[functions] Build failed: ${name} has a schedule that cannot be read: ${read.error}` };
  if (read.schedule === null) return { schedule: null };
  const parsed = parseSchedule(read.schedule);
  const refusal = !parsed.ok
    ? parsed.error
    : schedulerCron(parsed.schedule) === null
      ? 'it is too long for the scheduler; use fewer values'
      : null;
  if (refusal !== null) return { line: `[functions] Build failed: ${name} has an invalid schedule "${read.schedule}": ${refusal}` };
  return { schedule: read.schedule.trim() };
}

export type FunctionsBuild = { ok: true; log: string[]; functions: FunctionRecord[] } | { ok: false; log: string[] };

/**
 * Bundles one function from a folder on disk (`slipway dev`) with the build's own esbuild options, checks and
 * size limit: what it refuses, the build at publish refuses too. Returns the bundle or the build-log lines.
 */
export async function bundleFunctionInFolder(
  dir: string,
  entry: FunctionEntry,
  root: string,
  options: BundleOptions = {},
): Promise<{ code: Uint8Array } | { log: string[] }> {
  const result = await bundle(await loadEsbuild(), dir, entry, root, options);
  if ('failure' in result) return { log: result.failure };
  if (result.code.byteLength > MAX_FUNCTION_BUNDLE_BYTES) {
    return {
      log: [
        `[functions] Build failed: ${entry.name} bundles to ${formatBytes(result.code.byteLength)}, ` +
          `over the ${formatBytes(MAX_FUNCTION_BUNDLE_BYTES)} limit; largest inputs:`,
        ...largestInputs(result.metafile, root),
      ],
    };
  }
  return { code: result.code };
}

/** Copies the build's sources (`{root}functions/**`, `{root}node_modules/**`) from the sites bucket into `dir`, root stripped. */
async function fetchSources(input: FunctionsBuildInput, root: string, dir: string): Promise<void> {
  const sites = config.bucket('sites');
  const limit = pLimit(FETCH_CONCURRENCY);
  const sources = input.paths.filter((path) => isFunctionsSource(path, root));
  await Promise.all(
    sources.map((path) =>
      limit(async () => {
        const relative = path.slice(root.length);
        // Manifest paths are checked at begin; this only guards the temp folder.
        if (relative.split('/').some((segment) => segment === '..' || segment === '')) return;
        const reply = await getObject(sites, input.objectKey(path));
        const target = join(dir, relative);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, await reply.transformToByteArray());
      }),
    ),
  );
}

const messageLine = (message: Message, root: string) => {
  const where = message.location ? `${root}${message.location.file}:${message.location.line}:${message.location.column}: ` : '';
  return `[functions]   ${where}${message.text}`;
};

/** Bundles one entry; a log of failure lines, or the module and its metafile. */
export interface BundleOptions {
  /**
   * Accept packages found in a node_modules/ above the folder (`slipway dev` of a folder on the machine): the
   * deploy of the same folder sends exactly those files as the deployment's node_modules/ (lib/cli/function-deps.ts).
   * The platform's build never sets it: its folder holds the deployment's files and nothing else.
   */
  packagesAbove?: boolean;
}

const inPackage = (path: string) => /(^|\/)node_modules\//.test(path);

async function bundle(
  esbuild: typeof import('esbuild'),
  dir: string,
  entry: FunctionEntry,
  root: string,
  options: BundleOptions = {},
): Promise<{ code: Uint8Array; metafile: Metafile } | { failure: string[] }> {
  const relativeEntry = entry.path.slice(root.length);
  try {
    const result = await esbuild.build({
      absWorkingDir: dir,
      entryPoints: [join(dir, relativeEntry)],
      outfile: join(dir, '.slipway-out', `${entry.name}.mjs`),
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      external: ['node:*', ...builtinModules],
      banner: { js: BANNER },
      minify: true,
      keepNames: true,
      metafile: true,
      write: false,
      logLevel: 'silent',
      // Only the deployment's own files: a tsconfig above the temp folder is not the project's.
      tsconfigRaw: '{}',
    });
    const output = result.outputFiles.find((file) => file.path.endsWith('.mjs'))!;
    // Every input must be a file of this deployment (esbuild looks for node_modules above the temp folder too).
    const foreign = Object.keys(result.metafile.inputs).filter(
      (path) => (path.startsWith('../') || path.startsWith('/')) && !(options.packagesAbove && inPackage(path)),
    );
    if (foreign.length > 0) {
      return {
        failure: [
          `[functions] Build failed: ${entry.name} imports files that are not part of this deployment`,
          ...foreign.slice(0, LARGEST_INPUTS_SHOWN).map((path) => `[functions]   ${path}`),
        ],
      };
    }
    return { code: output.contents, metafile: result.metafile };
  } catch (error) {
    const messages = (error as BuildFailure).errors;
    if (!Array.isArray(messages)) throw error;
    return { failure: [`[functions] Build failed: ${entry.path} could not be bundled`, ...messages.map((m) => messageLine(m, root))] };
  }
}

/** The inputs that weigh most in a bundle, largest first. */
function largestInputs(metafile: Metafile, root: string): string[] {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined) ?? Object.values(metafile.outputs)[0];
  return Object.entries(output?.inputs ?? {})
    .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
    .slice(0, LARGEST_INPUTS_SHOWN)
    .map(([path, { bytesInOutput }]) => `[functions]   ${root}${path}: ${formatBytes(bytesInOutput)}`);
}

/**
 * Builds a deployment's functions. On success the bundles are in the BUNDLES
 * bucket and one record per function is in the table (none is live until the
 * deployment is); on failure nothing is stored and the log says why. A
 * deployment without functions builds nothing and logs nothing.
 */
export async function buildDeploymentFunctions(input: FunctionsBuildInput): Promise<FunctionsBuild> {
  const root = rootPrefix(input.rootDirectory);
  const { entries, problems } = functionEntries(input.paths, root);
  if (problems.length > 0) return { ok: false, log: [INVALID_NAME_LINE, ...problems] };
  if (entries.length === 0) return { ok: true, log: [], functions: [] };

  const labels = entries.map((entry) => ({ name: entry.name, label: functionLabel(entry.name, input.subdomain) }));
  const tooLong = labels.filter(({ label }) => label.length > MAX_FUNCTION_LABEL_LENGTH);
  if (tooLong.length > 0) {
    return {
      ok: false,
      log: tooLong.map(
        ({ label }) =>
          `[functions] Build failed: hostname label ${label} is ${label.length} characters; {name}-{subdomain} must fit in ${MAX_FUNCTION_LABEL_LENGTH}`,
      ),
    };
  }
  const taken = await claimFunctionHostnames(input.projectId, labels);
  if (taken.length > 0) {
    return {
      ok: false,
      log: taken.map(
        (label) => `[functions] Build failed: hostname ${label}.${config.functionDomain()} is held by another project; rename the function`,
      ),
    };
  }

  const dir = await mkdtemp(join(tmpdir(), 'slipway-functions-'));
  const log: string[] = [];
  const built: BuiltFunction[] = [];
  let failed = false;
  try {
    await fetchSources(input, root, dir);
    for (const entry of entries) {
      const scheduled = functionSchedule(entry.name, await readFile(join(dir, entry.path.slice(root.length)), 'utf8'));
      if ('line' in scheduled) {
        log.push(scheduled.line);
        failed = true;
        continue;
      }
      const result = await bundleFunctionInFolder(dir, entry, root);
      if ('log' in result) {
        log.push(...result.log);
        failed = true;
        continue;
      }
      const every = scheduled.schedule === null ? '' : `, runs on "${scheduled.schedule}" while live`;
      log.push(`[functions] Built ${entry.name} (${formatBytes(result.code.byteLength)})${every}`);
      built.push({ name: entry.name, entry_path: entry.path, code: result.code, schedule: scheduled.schedule });
    }
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
  // Lines of the functions that did build stay: they say which ones were fine.
  if (failed) return { ok: false, log };

  const createdAt = new Date().toISOString();
  const bundles = config.bucket('bundles');
  const records: FunctionRecord[] = built.map((fn) => ({
    function_id: functionIdFor(input.projectId, fn.name),
    name: fn.name,
    project_id: input.projectId,
    team_id: input.teamId,
    deployment_id: input.deploymentId,
    entry_path: fn.entry_path,
    bundle_key: functionBundleKey(input.teamId, input.projectId, input.deploymentId, fn.name),
    bundle_sha256: createHash('sha256').update(fn.code).digest('hex'),
    bundle_bytes: fn.code.byteLength,
    created_at: createdAt,
    schedule: fn.schedule,
  }));
  await Promise.all(
    built.map((fn, i) =>
      putObject({ bucket: bundles, key: records[i]!.bundle_key, body: fn.code, contentType: 'text/javascript; charset=utf-8' }),
    ),
  );
  await batchWriteAll(
    records.map((record) => ({ PutRequest: { Item: { ...keys.function(input.projectId, input.deploymentId, record.name), ...record } } })),
  );
  return { ok: true, log, functions: records };
}
