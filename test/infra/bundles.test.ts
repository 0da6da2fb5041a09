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
 * in the cloud only, where nothing here runs: this test finds it at build time.
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
      found.push({ handler, streaming: used.some((f) => STREAMING_COMMAND.test(f)), eventStreamCode: used.some((f) => EVENT_STREAM_CODE.test(f)) });
    }
    const streaming = found.filter((f) => f.streaming).map((f) => f.handler).sort();
    expect(streaming).toEqual([...eventStreamHandlers].sort());
    expect(found.filter((f) => f.eventStreamCode).map((f) => f.handler).sort()).toEqual(streaming);
    expect(found.length).toBeGreaterThan(30);
  });
});
