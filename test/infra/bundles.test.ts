import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { esbuildOptions, eventStreamHandlers, repoRoot } from '../../infra/bundling.ts';
import { fallbackRoute, routes, type RouteRow } from '../../lib/http/routes.ts';
import { workers } from '../../lib/workers.ts';

/**
 * The bundles leave the SDK's event-stream code out unless their handler is
 * listed in `eventStreamHandlers` (infra/bundling.ts). A handler that calls a
 * streaming operation without being listed would fail on its first such call
 * in the cloud only, and one whose bundle imports the module statically would
 * fail to start there: this test finds both at build time.
 */
const STREAMING_COMMAND = /\/commands\/\w*(ResponseStream|EventStream|SelectObjectContent|ConverseStream|SubscribeToShard)\w*Command\.js$/;
const EVENT_STREAM_CODE = /@smithy\/core\/dist-es\/submodules\/event-streams\//;

const handlers = [
  ...new Set([
    ...(routes as readonly RouteRow[]).map((row) => row.handler),
    fallbackRoute.handler,
    ...workers.map((row) => row.handler),
    ...fs
      .readdirSync(path.join(repoRoot, 'handlers', 'edge'))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `handlers/edge/${file}`),
  ]),
];

describe('event-stream code in the handler bundles', () => {
  it('is in exactly the bundles of handlers that call a streaming operation, and those are listed', { timeout: 180_000 }, async () => {
    const found: { handler: string; streaming: boolean; eventStreamCode: boolean }[] = [];
    for (const handler of handlers) {
      const result = await esbuild.build({ ...esbuildOptions(handler, path.join(repoRoot, 'bench', '.out', 'bundles-test.mjs')), metafile: true, write: false });
      const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint)!;
      const used = Object.entries(output.inputs).filter(([, info]) => info.bytesInOutput > 0).map(([file]) => file);
      // A static import of the module (the S3 client's, kept by the bundle) is loaded at init: left out, the Lambda fails to start.
      const staticImport = Object.entries(result.metafile.inputs).some(
        ([file, info]) =>
          used.includes(file) && !EVENT_STREAM_CODE.test(file) && info.imports.some((i) => i.kind === 'import-statement' && /event-streams/.test(i.path)),
      );
      found.push({
        handler,
        streaming: used.some((f) => STREAMING_COMMAND.test(f)) || staticImport,
        eventStreamCode: used.some((f) => EVENT_STREAM_CODE.test(f)),
      });
    }
    const needed = found.filter((f) => f.streaming).map((f) => f.handler).sort();
    expect(needed).toEqual([...eventStreamHandlers].sort());
    expect(found.filter((f) => f.eventStreamCode).map((f) => f.handler).sort()).toEqual(needed);
    expect(found.length).toBeGreaterThan(30);
  });
});

/**
 * A route handler's bundle carries its own route row's access rule, inlined
 * at build time, instead of the whole route table (lib/http/pipeline.ts
 * accessRuleOf). Built and run here as Lambda would load it.
 */
describe('the route row in a route handler bundle', () => {
  const bundleOf = async (row: RouteRow) => {
    const outfile = path.join(repoRoot, 'bench', '.out', 'route-bundles', `${row.handler.replace(/\W+/g, '_')}.mjs`);
    const result = await esbuild.build({ ...esbuildOptions(row.handler, outfile), metafile: true });
    const inputs = Object.values(result.metafile.outputs).find((o) => o.entryPoint)!.inputs;
    return { outfile, files: Object.keys(inputs), text: fs.readFileSync(outfile, 'utf8') };
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

  it('leaves the route table out of every route bundle, and carries only its own path', { timeout: 180_000 }, async () => {
    for (const row of rows) {
      const { files, text } = await bundleOf(row);
      expect(files.filter((f) => f.endsWith('lib/http/routes.ts')), row.handler).toEqual([]);
      expect(text, row.handler).toContain(JSON.stringify(`${row.method} ${row.path}`).slice(1, -1));
      // The table's rows name their handler files; nothing else in a bundle does.
      expect(text.includes('handlers/http/'), row.handler).toBe(false);
    }
  });

  it('applies that rule when run: a signed-in route answers 401 UNAUTHENTICATED without a credential, an admin route too', { timeout: 120_000 }, async () => {
    for (const key of ['GET /api/v1/projects/{id}', 'GET /api/v1/admin/attention']) {
      const row = rows.find((r) => `${r.method} ${r.path}` === key)!;
      const { outfile } = await bundleOf(row);
      const { handler } = (await import(`${outfile}?${Date.now()}`)) as { handler: (e: unknown, c: unknown) => Promise<{ statusCode: number; body: string }> };
      const reply = await handler(event(row), context);
      expect(reply.statusCode, key).toBe(401);
      expect(JSON.parse(reply.body).code, key).toBe('UNAUTHENTICATED');
    }
  });
});
