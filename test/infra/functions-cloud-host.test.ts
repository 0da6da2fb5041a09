import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../infra/bundling.ts';
import {
  functionLambdaName,
  functionPackage,
  lambdaEntrySource,
  RUNNER_LAYER_MODULE,
} from '../../lib/functions/hosts/cloud/lambda-package.ts';
import {
  decodeRunnerStream,
  doorReplyFromPrelude,
  hostFailureOf,
  type CloudRunnerEvent,
} from '../../lib/functions/hosts/cloud/runner-stream.ts';
import { FunctionHostError } from '../../lib/functions/host.ts';
import { tailedBodyEnd, tailedBodyPiece } from '../../lib/functions/runner/protocol.mjs';

/**
 * The pure parts of the cloud host (lib/functions/hosts/cloud/cloud-host.ts): the stream
 * framing, the reply translation, the deployment package, and the Lambda entry
 * run against the real runner core with a stand-in for the Lambda runtime's
 * `awslambda` global. Lambda itself (CreateFunction, InvokeWithResponseStream)
 * is not exercised: moto has no Lambda runtime (docs/functions.md).
 */

const delimiter = Buffer.alloc(8);
const frame = (prelude: object, ...body: string[]) => [
  Buffer.concat([Buffer.from(JSON.stringify(prelude)), delimiter]),
  ...body.map((b) => Buffer.from(b)),
];
async function* chunksOf(parts: Buffer[], splitEvery = 0): AsyncIterable<Uint8Array> {
  const all = Buffer.concat(parts);
  if (!splitEvery) {
    for (const part of parts) yield part;
    return;
  }
  for (let i = 0; i < all.length; i += splitEvery) yield all.subarray(i, i + splitEvery);
}

describe('the runner stream framing', () => {
  it('splits the prelude from the body, whatever the chunk boundaries', async () => {
    const parts = frame({ statusCode: 201, headers: { 'Content-Type': 'text/plain' }, cookies: ['a=1'] }, 'hello ', 'world');
    for (const split of [0, 1, 3, 7, 9]) {
      const { prelude, body } = await decodeRunnerStream(chunksOf(parts, split));
      expect(prelude).toEqual({ statusCode: 201, headers: { 'content-type': 'text/plain' }, cookies: ['a=1'] });
      expect(await text(body)).toBe('hello world');
    }
  });

  it('keeps NUL bytes of the body (only the first eight after the prelude delimit it)', async () => {
    const binary = Buffer.concat([Buffer.alloc(16), Buffer.from('end')]);
    const { body } = await decodeRunnerStream(chunksOf([...frame({ statusCode: 200 }), binary]));
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks)).toEqual(binary);
  });

  it('fails as a crashed instance when the stream ends before the prelude', async () => {
    await expect(decodeRunnerStream(chunksOf([Buffer.from('{"statusCode":20')]))).rejects.toBeInstanceOf(FunctionHostError);
  });

  it('cuts the body when the stream fails after the prelude (the door then cuts the connection)', async () => {
    async function* failing(): AsyncIterable<Uint8Array> {
      yield frame({ statusCode: 200 })[0]!;
      yield Buffer.from('partial');
      throw hostFailureOf('Runtime.OutOfMemory');
    }
    const { body } = await decodeRunnerStream(failing());
    await expect(text(body)).rejects.toMatchObject({ kind: 'out_of_memory' });
  });

  it("a watched call's framed body arrives whole whatever the chunk boundaries, and its console lines before the body ends", async () => {
    const binary = Buffer.concat([Buffer.alloc(16), Buffer.from('end')]);
    const lines = [
      { at: '2026-11-28T12:00:00.000Z', stream: 'stdout', line: 'handling 7' },
      { at: '2026-11-28T12:00:00.001Z', stream: 'stderr', line: 'about to fail' },
    ] as const;
    const parts = [
      frame({ statusCode: 200 })[0]!,
      tailedBodyPiece(Buffer.from('hello ')),
      tailedBodyPiece(binary),
      tailedBodyEnd([...lines]),
    ];
    for (const split of [0, 1, 3, 5]) {
      const decoded = await decodeRunnerStream(chunksOf(parts, split), { framed: true });
      const chunks: Buffer[] = [];
      for await (const chunk of decoded.body) {
        chunks.push(chunk as Buffer);
      }
      expect(Buffer.concat(chunks)).toEqual(Buffer.concat([Buffer.from('hello '), binary]));
      expect(decoded.console).toEqual(lines);
    }
    // A stream cut before the body's end, or lines that do not read: the body as far as it came, no lines.
    const cut = await decodeRunnerStream(chunksOf([frame({ statusCode: 200 })[0]!, tailedBodyPiece(Buffer.from('part'))]), {
      framed: true,
    });
    expect(await text(cut.body)).toBe('part');
    expect(cut.console).toEqual([]);
    const garbled = await decodeRunnerStream(
      chunksOf([frame({ statusCode: 200 })[0]!, tailedBodyEnd([]).subarray(0, 4), Buffer.from('[{')]),
      {
        framed: true,
      },
    );
    expect(await text(garbled.body)).toBe('');
    expect(garbled.console).toEqual([]);
  });

  it('maps Lambda error codes to the door failure kinds', () => {
    expect(hostFailureOf('Runtime.OutOfMemory').kind).toBe('out_of_memory');
    expect(hostFailureOf('Unhandled').kind).toBe('instance_crashed');
    expect(hostFailureOf(undefined).kind).toBe('instance_crashed');
  });
});

describe('the door reply', () => {
  it('keeps several set-cookie as several pairs, takes the outcome and the cold start from the runner, and drops the report headers', () => {
    const reply = doorReplyFromPrelude(
      {
        statusCode: 200,
        headers: {
          'content-type': 'text/event-stream',
          'x-slipway-runner-outcome': 'response',
          'x-slipway-runner-cold-start': 'true',
          'x-slipway-runner-boot-ms': '412',
          'x-slipway-runner-instance': 'i-1',
        },
        cookies: ['a=1; Path=/', 'b=2'],
      },
      Readable.from([]),
      'fallback',
      false,
    );
    expect(reply).toMatchObject({ outcome: 'response', status: 200, coldStart: true, bootMs: 412, instanceId: 'i-1' });
    expect(reply.headers).toEqual([
      ['content-type', 'text/event-stream'],
      ['set-cookie', 'a=1; Path=/'],
      ['set-cookie', 'b=2'],
    ]);
  });

  it('counts a request that waited for its Lambda to be made as a cold start; a reply with no report is a failed handler', () => {
    const reply = doorReplyFromPrelude({ statusCode: 502, headers: {}, cookies: [] }, Readable.from([]), 'fn-name', true);
    expect(reply).toMatchObject({ outcome: 'handler_error', coldStart: true, instanceId: 'fn-name' });
    expect(reply.bootMs).toBeUndefined();
  });
});

describe('the deployment package of a user-function Lambda', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names a Lambda by function and bundle, under the prefix, within 64 characters', () => {
    const name = functionLambdaName('Slipway-fn-', { function_id: 'f1', bundle_sha256: 'a'.repeat(64) });
    expect(name).toMatch(/^Slipway-fn-[0-9a-f]+$/);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(functionLambdaName('Slipway-fn-', { function_id: 'f1', bundle_sha256: 'b'.repeat(64) })).not.toBe(name);
  });

  it('is a zip of the entry and the bundle that unzip reads back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-zip-'));
    dirs.push(dir);
    const bundle = Buffer.from('export default () => new Response("hi");\n');
    fs.writeFileSync(path.join(dir, 'package.zip'), functionPackage(bundle));
    // Python's zipfile checks the CRCs and the central directory, as Lambda's unpacking does.
    const listing = execFileSync(
      'python3',
      [
        '-c',
        'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print("\\n".join(z.namelist())); sys.stdout.write(z.read("function.mjs").decode())',
        path.join(dir, 'package.zip'),
      ],
      { encoding: 'utf8' },
    );
    expect(listing).toBe(`index.mjs\nfunction.mjs\n${bundle.toString()}`);
  });

  it('its entry drives the runner: request in, streamed reply with cookies, outcome and cold start out, waitUntil awaited', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-entry-'));
    dirs.push(dir);
    const runner = path.join(repoRoot, 'lib/functions/runner/runner.mjs');
    fs.writeFileSync(path.join(dir, 'index.mjs'), lambdaEntrySource().replace(RUNNER_LAYER_MODULE, pathToFileURL(runner).href));
    fs.writeFileSync(
      path.join(dir, 'function.mjs'),
      `export default async (request, context) => {
        let done;
        context.waitUntil(new Promise((resolve) => setTimeout(() => { globalThis.__afterReply = true; resolve(); }, 20)));
        const headers = new Headers({ 'content-type': 'text/plain' });
        headers.append('set-cookie', 'a=1');
        headers.append('set-cookie', 'b=2');
        return new Response(request.method + ' ' + request.url + ' ' + (await request.text()) + ' ' + request.headers.get('host'), { status: 201, headers });
      };\n`,
    );
    // The Lambda runtime's global: streamifyResponse passes the stream; HttpResponseStream writes the prelude.
    (globalThis as Record<string, unknown>).awslambda = {
      streamifyResponse: (fn: unknown) => fn,
      HttpResponseStream: {
        from: (stream: PassThrough, metadata: object) => {
          stream.write(Buffer.concat([Buffer.from(JSON.stringify(metadata)), delimiter]));
          return stream;
        },
      },
    };
    try {
      const entry = (await import(pathToFileURL(path.join(dir, 'index.mjs')).href)) as {
        handler: (event: CloudRunnerEvent, stream: PassThrough) => Promise<void>;
      };
      const invoke = async (event: CloudRunnerEvent) => {
        const stream = new PassThrough();
        const decoded = decodeRunnerStream(stream);
        await entry.handler(event, stream);
        stream.end();
        const { prelude, body } = await decoded;
        return { reply: doorReplyFromPrelude(prelude, body, 'fallback', false), text: await text(body) };
      };
      const event: CloudRunnerEvent = {
        method: 'POST',
        publicUrl: 'https://hello-site.fn.example.test/',
        query: 'a=b',
        headers: [
          ['host', 'hello-site.fn.example.test'],
          ['content-type', 'text/plain'],
        ],
        bodyBase64: Buffer.from('payload').toString('base64'),
      };
      const first = await invoke(event);
      // Nobody tails it: no console lines are gathered, the body is not framed.
      expect(first.reply.console).toBeUndefined();
      expect(first.text).toBe('POST https://hello-site.fn.example.test/?a=b payload hello-site.fn.example.test');
      expect(first.reply).toMatchObject({ outcome: 'response', status: 201, coldStart: true });
      expect(first.reply.headers).toEqual(
        expect.arrayContaining([
          ['set-cookie', 'a=1'],
          ['set-cookie', 'b=2'],
          ['content-type', 'text/plain'],
        ]),
      );
      // The invocation lasted until the waitUntil promise settled.
      expect((globalThis as Record<string, unknown>).__afterReply).toBe(true);
      const second = await invoke({ ...event, method: 'GET', bodyBase64: null });
      expect(second.reply.coldStart).toBe(false);
      // A staged body (body-staging.ts) is read from its URL, as a stream, before the handler sees the request.
      const staged = Buffer.from('staged payload '.repeat(1000));
      const store = createServer((req, res) => (req.url === '/staged' ? res.end(staged) : res.writeHead(403).end('<Error/>')));
      await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
      const at = `http://127.0.0.1:${(store.address() as AddressInfo).port}`;
      try {
        const third = await invoke({ ...event, bodyBase64: null, bodyUrl: `${at}/staged` });
        expect(third.text).toBe(`POST https://hello-site.fn.example.test/?a=b ${staged} hello-site.fn.example.test`);
        await expect(entry.handler({ ...event, bodyBase64: null, bodyUrl: `${at}/expired` }, new PassThrough())).rejects.toThrow(
          'the staged request body could not be read (S3 answered 403)',
        );
      } finally {
        store.close();
      }
    } finally {
      delete (globalThis as Record<string, unknown>).awslambda;
      delete (globalThis as Record<string, unknown>).__afterReply;
    }
  });

  it("a watched call's entry sends the call's console lines (stream and time) after its body; an unwatched one gathers none", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-entry-tail-'));
    dirs.push(dir);
    const runner = path.join(repoRoot, 'lib/functions/runner/runner.mjs');
    fs.writeFileSync(path.join(dir, 'index.mjs'), lambdaEntrySource().replace(RUNNER_LAYER_MODULE, pathToFileURL(runner).href));
    fs.writeFileSync(
      path.join(dir, 'function.mjs'),
      `const log = console.log;
      export default async (request) => {
        const n = new URL(request.url).searchParams.get('n');
        log('handling', Number(n));
        console.error('two\\nlines');
        process.stdout.write('raw write\\n');
        if (n === '0') throw new TypeError('tail-visible failure');
        const body = new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('first;'));
            console.warn('while streaming');
            controller.enqueue(new Uint8Array(12));
            controller.close();
          },
        });
        return new Response(body);
      };\n`,
    );
    (globalThis as Record<string, unknown>).awslambda = {
      streamifyResponse: (fn: unknown) => fn,
      HttpResponseStream: {
        from: (stream: PassThrough, metadata: object) => {
          stream.write(Buffer.concat([Buffer.from(JSON.stringify(metadata)), delimiter]));
          return stream;
        },
      },
    };
    try {
      const entry = (await import(pathToFileURL(path.join(dir, 'index.mjs')).href)) as {
        handler: (event: CloudRunnerEvent, stream: PassThrough) => Promise<void>;
      };
      const invoke = async (query: string, tail: boolean) => {
        const stream = new PassThrough();
        const decoded = decodeRunnerStream(stream, { framed: tail });
        const event: CloudRunnerEvent = {
          method: 'GET',
          publicUrl: 'https://tail-site.fn.example.test/',
          query,
          headers: [['host', 'tail-site.fn.example.test']],
          bodyBase64: null,
          ...(tail ? { tail: true } : {}),
        };
        await entry.handler(event, stream);
        stream.end();
        const { body, console: lines } = await decoded;
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(chunk as Buffer);
        return { body: Buffer.concat(chunks), lines: lines.map(({ stream, line }) => [stream, line]), at: lines.map((l) => l.at) };
      };
      const watched = await invoke('n=7', true);
      expect(watched.body).toEqual(Buffer.concat([Buffer.from('first;'), Buffer.alloc(12)]));
      expect(watched.lines).toEqual([
        ['stdout', 'handling 7'],
        ['stderr', 'two'],
        ['stderr', 'lines'],
        ['stdout', 'raw write'],
        ['stderr', 'while streaming'],
      ]);
      expect(watched.at.every((at) => !Number.isNaN(Date.parse(at)))).toBe(true);
      const failed = await invoke('n=0', true);
      expect(failed.body.length).toBe(0);
      // As locally, the runner's own line about the failure is the function's stderr too (the stack follows it).
      expect(failed.lines.slice(0, 5)).toEqual([
        ['stdout', 'handling 0'],
        ['stderr', 'two'],
        ['stderr', 'lines'],
        ['stdout', 'raw write'],
        ['stderr', '[runner] handler error: TypeError: tail-visible failure'],
      ]);
      const unwatched = await invoke('n=8', false);
      expect(unwatched.body).toEqual(Buffer.concat([Buffer.from('first;'), Buffer.alloc(12)]));
      expect(unwatched.lines).toEqual([]);
    } finally {
      delete (globalThis as Record<string, unknown>).awslambda;
    }
  });
});
