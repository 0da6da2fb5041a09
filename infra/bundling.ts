import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { routeKey, routes, type RouteRow } from '../lib/http/routes.ts';
import { lambdaEntrySource } from '../lib/functions/hosts/cloud/lambda-package.ts';
import { workers } from '../lib/workers.ts';

/**
 * The one description of how a handler becomes a Lambda bundle. The stack's
 * shared build of every bundle (infra/lambda-bundles.ts) and the handler
 * benchmark both derive their esbuild options from it, so the sizes and import
 * times the bench prints are those of what gets deployed.
 */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Node 22 everywhere: the spec promises it, and local runs pin it too. */
export const lambdaRuntime = Runtime.NODEJS_22_X;
export const lambdaArchitecture = Architecture.ARM_64;

/**
 * ESM output still meets CommonJS dependencies that call `require` for Node
 * built-ins; ESM has no `require`, so the banner defines one. The import is
 * aliased so it cannot clash with a name in the bundle.
 */
export const requireBanner =
  "import { createRequire as __slipwayCreateRequire } from 'node:module'; const require = __slipwayCreateRequire(import.meta.url);";

export const bundleSettings = {
  target: 'node22',
  format: 'esm',
  minify: true,
  sourceMap: true,
  // Stack traces need file and line numbers, not the sources: keeps each asset small.
  sourcesContent: false,
  // `module` first lets esbuild tree-shake the ESM builds of the AWS SDK.
  mainFields: ['module', 'main'],
  // Bundle the AWS SDK instead of using the runtime's copy (the version we
  // test against is the version we run, and a minified tree-shaken client
  // loads faster), except the credential providers Lambda never reaches:
  // the SDK's default chain tries the environment first and loads these
  // only by dynamic import() after it fails, and Lambda always puts the
  // function's credentials in the environment. Leaving them out saves
  // ~130 KB of every bundle; were one ever reached, its import fails loudly.
  externalModules: [
    '@aws-sdk/credential-provider-ini',
    '@aws-sdk/credential-provider-sso',
    '@aws-sdk/credential-provider-process',
    '@aws-sdk/credential-provider-web-identity',
    '@aws-sdk/credential-provider-login',
    '@aws-sdk/credential-provider-http',
    '@smithy/credential-provider-imds',
    '@aws-sdk/nested-clients',
    '@aws-sdk/token-providers',
  ] as string[],
  banner: requireBanner,
} as const;

/**
 * The SDK's event-stream code (~14 KB minified) reaches every bundle through a
 * dynamic import() in its HTTP protocol that only streaming operations take;
 * esbuild inlines it. Only the handlers listed here hold one
 * (InvokeWithResponseStream); every other bundle leaves the module out, and
 * were it ever reached, its import fails loudly. test/infra/bundles.test.ts
 * fails when a bundle calls a streaming operation and is not listed.
 */
export const EVENT_STREAM_MODULE = '@smithy/core/event-streams';
// The invocations worker builds the same cloud host as the door (lib/functions/hosts/cloud/cloud-host.ts), streaming call included.
// serve-site's bundle imports the module statically (found by the synthesized mode: its asset failed at import outside
// the repository, where no node_modules lies above it, as in /var/task).
export const eventStreamHandlers: ReadonlySet<string> = new Set([
  'handlers/edge/functions-router.ts',
  'handlers/workers/function-invocations.ts',
  'handlers/edge/serve-site.ts',
  // The builds worker's S3 client (build output, log and package store) imports it statically too: left out, the
  // worker would fail at import in /var/task (found by test/infra/bundles.test.ts once builds met the stricter check).
  'handlers/workers/builds.ts',
  // The cloud sweep's Lambda client (list, tag reads, delete of user-function Lambdas) carries the streaming invoke too.
  'handlers/workers/cloud-sweep.ts',
  // So does the function-lambdas worker's (it makes user-function Lambdas; found by the synthesized mode's test).
  'handlers/workers/function-lambdas.ts',
  // The container door runs the router's cloud host, streaming invoke included.
  'handlers/edge/functions-door-server.ts',
  // The warm pool's keeper writes and presigns assignments with the S3 client, which imports it statically.
  'handlers/workers/function-warm-tasks.ts',
]);

/**
 * Handlers that run in a container rather than in Lambda (the container door, handlers/edge/functions-door-server.ts):
 * their credentials come from the task's credential endpoint, which the SDK's default chain reaches only after trying
 * the providers Lambda never needs (its ini, process and web-identity steps import their modules before they decline),
 * so their bundles keep every credential provider.
 */
export const containerHandlers: ReadonlySet<string> = new Set(['handlers/edge/functions-door-server.ts']);

/** The modules one handler's bundle leaves out. */
export function externalModulesFor(handler: string): string[] {
  const external = containerHandlers.has(handler) ? [] : [...bundleSettings.externalModules];
  if (!eventStreamHandlers.has(handler)) external.push(EVENT_STREAM_MODULE);
  // A container image installs these from its own lockfile (a browser binary cannot be bundled).
  for (const row of workers) if (row.handler === handler && row.image) external.push(...row.image.runtimePackages);
  external.push(...runtimePackagesOf(handler));
  return external;
}

/** The packages a handler's Lambda asset carries in its node_modules, copied from the repository's (RouteRow `runtimePackages`). */
export function runtimePackagesOf(handler: string): string[] {
  const rows: readonly { handler: string; runtimePackages?: RouteRow['runtimePackages'] }[] = [
    ...(routes as readonly RouteRow[]),
    ...workers,
  ];
  return [...new Set(rows.filter((row) => row.handler === handler).flatMap((row) => row.runtimePackages?.names ?? []))];
}

/**
 * What a route handler's bundle is built with: its route row's key and access
 * rule as `process.env.SLIPWAY_BUNDLED_ROUTE`, which lib/http/pipeline.ts reads
 * instead of importing the whole route table (esbuild then leaves the table
 * out). Nothing for a handler that is not a route row's (workers, the fallback).
 */
export function routeDefine(handler: string): Record<string, string> {
  const value = bundledRouteValue(handler);
  return value === null ? {} : { [bundledRouteVariable]: JSON.stringify(value) };
}

export const bundledRouteVariable = 'process.env.SLIPWAY_BUNDLED_ROUTE';

/**
 * The user-function Lambdas' entry (lib/functions/hosts/cloud/lambda-entry.ts) as built by esbuild, given to
 * every bundle as `SLIPWAY_LAMBDA_ENTRY`: the cloud host writes it into each function's package (only the bundles
 * that hold the cloud host name it, so the others are unchanged).
 */
export function lambdaEntryDefine(): Record<string, string> {
  return { SLIPWAY_LAMBDA_ENTRY: JSON.stringify(lambdaEntrySource()) };
}

/**
 * The width every route row is padded to with spaces (JSON allows them), so that all routes' values have one length:
 * the shared build (infra/lambda-bundles.ts) then builds all routes with one placeholder and writes each row into its
 * own bundle without moving a column of the source map. Fixed rather than the widest row's, so that a new route does
 * not change every other route's bundle (and redeploy its Lambda).
 */
export const routeRowWidth = 256;

/** The route row a route handler's bundle carries, padded to routeRowWidth; null for a handler that is no route row's. */
export function bundledRouteValue(handler: string): string | null {
  const rows = (routes as readonly RouteRow[]).filter((row) => row.handler === handler);
  if (rows.length > 1) throw new Error(`${handler} is the handler of ${rows.length} routes; a bundle carries one route row`);
  if (!rows[0]) return null;
  const json = JSON.stringify({ key: routeKey(rows[0]), access: rows[0].access });
  if (json.length > routeRowWidth)
    throw new Error(`The route row of ${handler} is ${json.length} characters, over routeRowWidth (${routeRowWidth})`);
  return json.padEnd(routeRowWidth);
}

/** Environment every function gets so that stack traces map back to the TypeScript sources. */
export const bundleRuntimeEnvironment = { NODE_OPTIONS: '--enable-source-maps' } as const;

/** What every bundle is built with, whatever its handler (metafile paths relative to the repository root). */
export const sharedEsbuildOptions = {
  absWorkingDir: repoRoot,
  bundle: true,
  platform: 'node',
  target: bundleSettings.target,
  format: bundleSettings.format,
  minify: bundleSettings.minify,
  sourcemap: bundleSettings.sourceMap,
  sourcesContent: bundleSettings.sourcesContent,
  mainFields: [...bundleSettings.mainFields],
  banner: { js: bundleSettings.banner },
  logLevel: 'warning',
} satisfies BuildOptions;

/**
 * One handler's bundle as a build of its own (`entry` as a handler path from the repository root): byte for byte what
 * the shared build (infra/lambda-bundles.ts) makes of it, which test/infra/bundles.test.ts checks.
 */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    ...sharedEsbuildOptions,
    entryPoints: [path.resolve(repoRoot, entry)],
    outfile,
    external: externalModulesFor(entry),
    define: { ...lambdaEntryDefine(), ...routeDefine(entry) },
  };
}
