import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptions, eventStreamHandlers } from '../../infra/bundling.ts';
import { bundlesRoot, lambdaBundles, lambdaHandlers, type LambdaBundles } from '../../infra/lambda-bundles.ts';
import { fallbackRoute, routeKey, routes, type RouteRow } from '../../lib/http/routes.ts';

/**
 * The bundles leave the SDK's event-stream code out unless their handler is
 * listed in `eventStreamHandlers` (infra/bundling.ts). A handler that calls a
 * streaming operation without being listed would fail on its first such call
 * in the cloud only, and one whose bundle imports the module statically would
 * fail to start there: this test finds both at build time.
 */
const STREAMING_COMMAND = /\/commands\/\w*(ResponseStream|EventStream|SelectObjectContent|ConverseStream|SubscribeToShard)\w*Command\.js$/;
const EVENT_STREAM_CODE = /@smithy\/core\/dist-es\/submodules\/event-streams\//;

let bundles: LambdaBundles;
const handlers = lambdaHandlers();

// The shared build of every bundle: made by the synthesis when it ran first, else here (within a minute or two).
beforeAll(() => {
  bundles = lambdaBundles();
}, 300_000);

describe('event-stream code in the handler bundles', () => {
  it('is in exactly the bundles of handlers that call a streaming operation, and those are listed', () => {
    const found: { handler: string; streaming: boolean; eventStreamCode: boolean }[] = [];
    const { inputs, outputs } = bundles.metafile;
    for (const handler of handlers) {
      const used = Object.entries(outputs[handler]!.inputs)
        .filter(([, info]) => info.bytesInOutput > 0)
        .map(([file]) => file);
      // A static import of the module (the S3 client's, kept by the bundle) is loaded at init: left out, the Lambda fails to start.
      const staticImport = Object.entries(inputs).some(
        ([file, info]) =>
          used.includes(file) &&
          !EVENT_STREAM_CODE.test(file) &&
          info.imports.some((i) => i.kind === 'import-statement' && /event-streams/.test(i.path)),
      );
      found.push({
        handler,
        streaming: used.some((f) => STREAMING_COMMAND.test(f)) || staticImport,
        eventStreamCode: used.some((f) => EVENT_STREAM_CODE.test(f)),
      });
    }
    const needed = found
      .filter((f) => f.streaming)
      .map((f) => f.handler)
      .sort();
    expect(needed).toEqual([...eventStreamHandlers].sort());
    expect(
      found
        .filter((f) => f.eventStreamCode)
        .map((f) => f.handler)
        .sort(),
    ).toEqual(needed);
    expect(found.length).toBeGreaterThan(30);
  });
});

/**
 * A route handler's bundle carries its own route row's access rule, inlined
 * at build time, instead of the whole route table (lib/http/pipeline.ts
 * accessRuleOf). Built and run here as Lambda would load it.
 */
describe('the route row in a route handler bundle', () => {
  const bundleOf = (row: RouteRow) => {
    const outfile = path.join(bundles.folderOf(row.handler), 'index.mjs');
    return { outfile, files: Object.keys(bundles.metafile.outputs[row.handler]!.inputs), text: fs.readFileSync(outfile, 'utf8') };
  };
  const rows = routes as readonly RouteRow[];
  const event = (row: RouteRow) => ({
    version: '2.0',
    routeKey: `${row.method} ${row.path}`,
    rawPath: row.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
    rawQueryString: '',
    headers: {},
    pathParameters: {},
    requestContext: { requestId: 'bundle-test', http: { method: row.method, path: row.path, sourceIp: '127.0.0.1', userAgent: 'test' } },
    isBase64Encoded: false,
  });
  const context = { awsRequestId: 'bundle-test', getRemainingTimeInMillis: () => 10_000, callbackWaitsForEmptyEventLoop: true };

  it('leaves the route table out of every route bundle, and carries only its own path', () => {
    for (const row of rows) {
      const { files, text } = bundleOf(row);
      expect(
        files.filter((f) => /lib\/http\/routes(\.ts$|\/)/.test(f)),
        row.handler,
      ).toEqual([]);
      expect(text, row.handler).toContain(JSON.stringify(`${row.method} ${row.path}`).slice(1, -1));
      // The table's rows name their handler files; nothing else in a bundle does.
      expect(text.includes('handlers/http/'), row.handler).toBe(false);
    }
  });

  it('applies that rule when run: a signed-in route answers 401 UNAUTHENTICATED without a credential, an admin route too', {
    timeout: 120_000,
  }, async () => {
    for (const key of ['GET /api/v1/projects/{id}', 'GET /api/v1/admin/attention']) {
      const row = rows.find((r) => `${r.method} ${r.path}` === key)!;
      const { outfile } = bundleOf(row);
      const { handler } = (await import(`${pathToFileURL(outfile).href}?${Date.now()}`)) as {
        handler: (e: unknown, c: unknown) => Promise<{ statusCode: number; body: string }>;
      };
      const reply = await handler(event(row), context);
      expect(reply.statusCode, key).toBe(401);
      expect(JSON.parse(reply.body).code, key).toBe('UNAUTHENTICATED');
    }
  });
});

/**
 * The shared build makes each handler's bundle in one esbuild build with the
 * others (one per set of external modules; a route's row written over one
 * placeholder afterwards). What it makes is what esbuild makes of that
 * handler alone with the options infra/bundling.ts gives it: checked for a
 * route, a route with runtime packages, a worker with the event-stream code,
 * and the $default route, bundle and source map byte for byte.
 */
describe('the shared build of every bundle', () => {
  // Beside the shared build's folder, at the same depth, so the source maps' relative paths match too.
  const aloneRoot = `${bundlesRoot}.alone`;
  afterAll(() => fs.rmSync(aloneRoot, { recursive: true, force: true }));

  it('makes each bundle byte for byte as a build of its handler alone', { timeout: 120_000 }, async () => {
    const rows = routes as readonly RouteRow[];
    const samples = [
      rows.find((row) => routeKey(row) === 'GET /api/v1/projects/{id}')!.handler,
      rows.find((row) => row.runtimePackages)!.handler,
      'handlers/workers/builds.ts',
      fallbackRoute.handler,
    ];
    expect(new Set(samples).size).toBe(4);
    for (const handler of samples) {
      const alone = path.join(aloneRoot, path.basename(handler, '.ts'));
      await esbuild.build(esbuildOptions(handler, path.join(alone, 'index.mjs')));
      for (const file of ['index.mjs', 'index.mjs.map']) {
        const shared = fs.readFileSync(path.join(bundles.folderOf(handler), file));
        expect(shared.equals(fs.readFileSync(path.join(alone, file))), `${handler} ${file}`).toBe(true);
      }
    }
  });
});
