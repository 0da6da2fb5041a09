import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionHostError } from '../../lib/functions/host.ts';
import { repoRoot } from '../../lib/local/api-server.ts';
import { probeSandbox } from '../../lib/sandbox/capabilities.ts';
import { bundleAsBuild, call, callFails, startHost } from '../support/functions-host.ts';
import { scaled } from '../support/wait.ts';

/**
 * The local functions host, through createLocalFunctionHost, with real
 * sandboxed runner processes: plain ESM files (and esbuild bundles made as
 * the build makes them) are the bundles.
 */
let env: ReturnType<typeof startHost>;
beforeAll(() => {
  env = startHost();
});
afterAll(async () => {
  await env?.host.stop();
});

const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('export shapes, request and reply', () => {
  it('a default export function answers, with the public URL plus query, lower-cased headers and the host', async () => {
    const fn = env.define(
      'shape-default',
      `export default async (request, context) => Response.json({
        url: request.url,
        host: request.headers.get('host'),
        custom: request.headers.get('x-custom'),
        names: [...request.headers.keys()],
        method: request.method,
        body: request.method === 'POST' ? await request.text() : null,
        env: Object.keys(context.env).length,
        frozen: Object.isFrozen(context.env),
      })`,
    );
    const { reply, text } = await call(env.host, fn, {
      method: 'POST',
      query: 'a=1&b=two',
      headers: [['X-Custom', 'Value']],
      body: 'hello body',
    });
    expect(reply.outcome).toBe('response');
    expect(reply.status).toBe(200);
    const seen = JSON.parse(text);
    expect(seen).toMatchObject({
      url: 'http://shape-default-site.fn.localhost:3000/?a=1&b=two',
      host: 'shape-default-site.fn.localhost:3000',
      custom: 'Value',
      method: 'POST',
      body: 'hello body',
      env: 0,
      frozen: true,
    });
    expect(seen.names.every((name: string) => name === name.toLowerCase())).toBe(true);
    expect(reply.headers.some(([name]) => name.startsWith('x-slipway-'))).toBe(false);
  });

  it('a default object with fetch (a Hono app bundled as the build does) answers', async () => {
    const code = await bundleAsBuild(
      `import { Hono } from 'hono';
       const app = new Hono();
       app.get('/', (c) => c.text('hono says ' + c.req.query('q')));
       export default app;`,
      repoRoot,
    );
    const fn = env.define('shape-hono', code);
    const { reply, text } = await call(env.host, fn, { query: 'q=hi' });
    expect([reply.status, text]).toEqual([200, 'hono says hi']);
  });

  it('a named fetch export answers', async () => {
    const fn = env.define('shape-named', `export function fetch(request) { return new Response('named ' + new URL(request.url).search) }`);
    const { reply, text } = await call(env.host, fn, { query: 'x=1' });
    expect([reply.status, text]).toEqual([200, 'named ?x=1']);
  });

  it('module.exports = function (a CommonJS entry bundled as the build does) answers', async () => {
    const code = await bundleAsBuild(
      `module.exports = async function (request) { return new Response('cjs ' + request.method, { status: 201 }) }`,
      repoRoot,
    );
    const fn = env.define('shape-cjs', code);
    const { reply, text } = await call(env.host, fn);
    expect([reply.status, text]).toEqual([201, 'cjs GET']);
  });

  it('several Set-Cookie stay several pairs', async () => {
    const fn = env.define(
      'cookies',
      `export default () => {
        const headers = new Headers({ 'content-type': 'text/plain' });
        headers.append('set-cookie', 'a=1; Path=/; HttpOnly');
        headers.append('set-cookie', 'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT');
        return new Response('ok', { headers });
      }`,
    );
    const { reply } = await call(env.host, fn);
    expect(reply.headers.filter(([name]) => name === 'set-cookie').map(([, value]) => value)).toEqual([
      'a=1; Path=/; HttpOnly',
      'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT',
    ]);
  });

  it('a streamed body (text/event-stream) reaches the caller chunk by chunk', async () => {
    const fn = env.define(
      'stream',
      `export default () => {
        const encoder = new TextEncoder();
        let n = 0;
        const body = new ReadableStream({
          async pull(controller) {
            if (n > 0) await new Promise((r) => setTimeout(r, 400));
            if (n === 3) return controller.close();
            controller.enqueue(encoder.encode('data: ' + n++ + '\\n\\n'));
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      }`,
    );
    const { reply, text, chunks } = await call(env.host, fn);
    expect(reply.headers).toContainEqual(['content-type', 'text/event-stream']);
    expect(text).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
    // Each event arrived on its own, well before the next was produced.
    expect(chunks.map((c) => c.text)).toEqual(['data: 0\n\n', 'data: 1\n\n', 'data: 2\n\n']);
    expect(chunks[2]!.at - chunks[0]!.at).toBeGreaterThanOrEqual(600);
  });

  it('a throw or rejection is handler_error, a non-Response invalid_response: bare 500s without error text', async () => {
    const thrower = env.define('throws', `export default () => { throw new Error('secret detail at /srv/app.js') }`);
    const rejecter = env.define('rejects', `export default async () => { await null; throw new Error('secret detail') }`);
    const invalid = env.define('invalid', `export default () => ({ status: 200, body: 'not a Response' })`);
    for (const [fn, outcome] of [
      [thrower, 'handler_error'],
      [rejecter, 'handler_error'],
      [invalid, 'invalid_response'],
    ] as const) {
      const { reply, text } = await call(env.host, fn);
      expect([reply.outcome, reply.status, text]).toEqual([outcome, 500, '']);
    }
    const errors = env.events.filter((e) => e.type === 'console' && e.fn.name === 'throws').map((e) => (e as { line: string }).line);
    expect(errors.join('\n')).toContain('secret detail at /srv/app.js');
  });

  it('waitUntil work finishes after the reply; a rejected waitUntil is logged, not thrown', async () => {
    const fn = env.define(
      'wait-until',
      `let finished = 0;
       export default (request, context) => {
         if (new URL(request.url).searchParams.has('read')) return new Response(String(finished));
         context.waitUntil(new Promise((r) => setTimeout(r, 300)).then(() => { finished++ }));
         context.waitUntil(Promise.reject(new Error('background failed')));
         return new Response('replied with ' + finished);
       }`,
    );
    const first = await call(env.host, fn);
    expect(first.text).toBe('replied with 0');
    await sleepMs(700);
    const second = await call(env.host, fn, { query: 'read' });
    expect(second.reply.instanceId).toBe(first.reply.instanceId);
    expect(second.text).toBe('1');
    const lines = env.events.filter((e) => e.type === 'console' && e.fn.name === 'wait-until').map((e) => (e as { line: string }).line);
    expect(lines.join('\n')).toContain('waitUntil promise rejected');
  });

  it('a bundle that fails to load, or exports no handler, is start_failed', async () => {
    const broken = env.define('broken', `throw new Error('top-level failure')`);
    const none = env.define('no-handler', `export const answer = 42;`);
    for (const fn of [broken, none, broken]) {
      const error = await callFails(env.host, fn);
      expect(error).toBeInstanceOf(FunctionHostError);
      expect((error as FunctionHostError).kind).toBe('start_failed');
    }
    expect(env.host.instanceCount(broken)).toBe(0);
    const loadErrors = env.events.filter((e) => e.type === 'console' && e.fn.name === 'broken').map((e) => (e as { line: string }).line);
    expect(loadErrors.join('\n')).toContain('top-level failure');
  });
});

describe('the sandbox', () => {
  it('reading files outside the bundle, spawning processes and the user environment are refused', async () => {
    const fn = env.define(
      'escape',
      `import fs from 'node:fs';
       import cp from 'node:child_process';
       const attempt = (f) => { try { f(); return 'ALLOWED' } catch (e) { return e.code ?? String(e) } };
       export default () => Response.json({
         passwd: attempt(() => fs.readFileSync('/etc/passwd', 'utf8')),
         repo: attempt(() => fs.readFileSync(${JSON.stringify(`${repoRoot}/package.json`)}, 'utf8')),
         write: attempt(() => fs.writeFileSync('/tmp/escape.txt', 'x')),
         spawn: attempt(() => cp.spawn('/bin/sh', ['-c', 'true'])),
         execSync: attempt(() => cp.execSync('true')),
         envKeys: Object.keys(process.env).sort(),
       })`,
    );
    const { reply, text } = await call(env.host, fn);
    expect(reply.status).toBe(200);
    const seen = JSON.parse(text);
    expect(seen).toMatchObject({
      passwd: 'ERR_ACCESS_DENIED',
      repo: 'ERR_ACCESS_DENIED',
      write: 'ERR_ACCESS_DENIED',
      spawn: 'ERR_ACCESS_DENIED',
      execSync: 'ERR_ACCESS_DENIED',
    });
    // Nothing of the platform's environment: only what the runner needs, and HOME (bwrap adds PWD, the bundle folder).
    expect(seen.envKeys.filter((name: string) => name !== 'PWD')).toEqual([
      'HOME',
      'HTTPS_PROXY',
      'HTTP_PROXY',
      'NODE_USE_ENV_PROXY',
      'SLIPWAY_EGRESS_PORT',
      'SLIPWAY_EGRESS_SOCKET',
    ]);
  });

  it('a handler that fills Buffers past 512 MB is out_of_memory, and the instance is replaced', async () => {
    const fn = env.define(
      'hungry',
      `const kept = [];
       export default async (request) => {
         if (new URL(request.url).searchParams.has('fill')) {
           for (;;) { const b = Buffer.alloc(32 * 1024 * 1024); b.fill(7); kept.push(b); await new Promise((r) => setImmediate(r)); }
         }
         return new Response('still here');
       }`,
    );
    const warm = await call(env.host, fn);
    const error = await callFails(env.host, fn, { query: 'fill' });
    expect(error).toBeInstanceOf(FunctionHostError);
    expect((error as FunctionHostError).kind).toBe('out_of_memory');
    expect(env.events).toContainEqual(
      expect.objectContaining({ type: 'limit', kind: 'out_of_memory', fn: expect.objectContaining({ name: 'hungry' }) }),
    );
    const stopped = env.events.find((e) => e.type === 'instance_stopped' && e.fn.name === 'hungry');
    expect(stopped).toBeDefined();
    expect((stopped as { peakMemoryBytes: number }).peakMemoryBytes).toBeGreaterThan(400 * 1024 * 1024);
    const after = await call(env.host, fn);
    expect(after.text).toBe('still here');
    expect(after.reply.coldStart).toBe(true);
    expect(after.reply.instanceId).not.toBe(warm.reply.instanceId);
  });
});

describe('instances', () => {
  it('the cold-start flag: true on the first request, false on the next, true again after an idle stop', async () => {
    const previous = process.env.FUNCTIONS_IDLE_MS;
    process.env.FUNCTIONS_IDLE_MS = '300';
    try {
      const fn = env.define('idle', `export default () => new Response('hi')`);
      const first = await call(env.host, fn);
      expect(first.reply.coldStart).toBe(true);
      expect(first.reply.bootMs).toBeGreaterThan(0);
      const second = await call(env.host, fn);
      expect(second.reply.coldStart).toBe(false);
      expect(second.reply.instanceId).toBe(first.reply.instanceId);
      for (let i = 0; i < 50 && env.host.instanceCount(fn) > 0; i++) await sleepMs(100);
      expect(env.host.instanceCount(fn)).toBe(0);
      expect(env.events).toContainEqual(
        expect.objectContaining({ type: 'instance_stopped', fn: expect.objectContaining({ name: 'idle' }) }),
      );
      const third = await call(env.host, fn);
      expect(third.reply.coldStart).toBe(true);
      expect(third.reply.instanceId).not.toBe(first.reply.instanceId);
    } finally {
      if (previous === undefined) delete process.env.FUNCTIONS_IDLE_MS;
      else process.env.FUNCTIONS_IDLE_MS = previous;
    }
  });

  it('an 11th concurrent request starts a second instance', async () => {
    const fn = env.define(
      'eleven',
      `export default async () => { await new Promise((r) => setTimeout(r, 1500)); return new Response('done') }`,
    );
    await call(env.host, fn, { query: 'warm' }); // one instance running
    const replies = await Promise.all(Array.from({ length: 11 }, () => call(env.host, fn)));
    expect(replies.every((r) => r.text === 'done')).toBe(true);
    const ids = new Set(replies.map((r) => r.reply.instanceId));
    expect(ids.size).toBe(2);
    // The ten that fit the running instance did not wait for a start; the eleventh did.
    expect(replies.filter((r) => r.reply.coldStart)).toHaveLength(1);
  });

  it('at most 3 instances: 35 concurrent requests all answer from 3; a waiting request stops waiting when its signal aborts', async () => {
    // An instance's first ten requests hold it full (each waits until ten are inside together, then 2 s more), so
    // the requests beyond 30 wait for a slot however slowly a loaded machine hands the 35 to the host.
    const fn = env.define(
      'thirty',
      `const wait = (ms) => new Promise((r) => setTimeout(r, ms));
       let inside = 0;
       let served = 0;
       let full;
       const filled = new Promise((r) => (full = r));
       export default async () => {
         served += 1;
         inside += 1;
         if (inside === 10) full();
         if (served <= 10) await Promise.race([filled, wait(${scaled(5000)})]);
         await wait(${scaled(2000)});
         inside -= 1;
         return new Response('done');
       }`,
    );
    const pending = Array.from({ length: 35 }, () => call(env.host, fn));
    await sleepMs(300);
    const abort = new AbortController();
    const waiting = callFails(env.host, fn, {}, abort.signal);
    await sleepMs(200);
    abort.abort(new Error('budget'));
    const error = await waiting;
    expect(error.name).toBe('AbortError');
    const replies = await Promise.all(pending);
    expect(replies.every((r) => r.text === 'done')).toBe(true);
    expect(new Set(replies.map((r) => r.reply.instanceId)).size).toBe(3);
    expect(env.host.instanceCount(fn)).toBe(3);
    expect(env.events).toContainEqual(
      expect.objectContaining({ type: 'limit', kind: 'instance_cap_wait', fn: expect.objectContaining({ name: 'thirty' }) }),
    );
  }, 60_000);

  it('an abort before the reply rejects with AbortError and leaves the handler running', async () => {
    const fn = env.define(
      'slow-effect',
      `let effects = 0;
       export default async (request) => {
         if (new URL(request.url).searchParams.has('read')) return new Response(String(effects));
         await new Promise((r) => setTimeout(r, 600));
         effects++;
         return new Response('late');
       }`,
    );
    await call(env.host, fn, { query: 'read' });
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('function budget expired')), 150);
    const error = await callFails(env.host, fn, {}, abort.signal);
    expect(error.name).toBe('AbortError');
    await sleepMs(900);
    const read = await call(env.host, fn, { query: 'read' });
    expect(read.text).toBe('1');
  });
});

describe('an instance that exits on its own', () => {
  it('is instance_crashed for the request in flight, reported as a limit, and replaced', async () => {
    const fn = env.define(
      'exits',
      `export default async (request) => {
         if (new URL(request.url).searchParams.has('exit')) { setTimeout(() => process.exit(3), 50); await new Promise(() => {}); }
         return new Response('alive');
       }`,
    );
    const first = await call(env.host, fn);
    const error = await callFails(env.host, fn, { query: 'exit' });
    expect(error).toBeInstanceOf(FunctionHostError);
    expect((error as FunctionHostError).kind).toBe('instance_crashed');
    expect(env.events).toContainEqual(
      expect.objectContaining({ type: 'limit', kind: 'instance_crashed', fn: expect.objectContaining({ name: 'exits' }) }),
    );
    const after = await call(env.host, fn);
    expect([after.text, after.reply.coldStart]).toEqual(['alive', true]);
    expect(after.reply.instanceId).not.toBe(first.reply.instanceId);
  });
});

describe('the fallbacks, forced on this machine', () => {
  it('without a memory cgroup and without bubblewrap (network namespace only): the RSS watchdog stops an instance over 512 MB; files stay closed', async () => {
    const probed = probeSandbox();
    const fallback = startHost({
      prefork: 0,
      capabilities: { ...probed, memoryCgroup: null, memswAccounting: false, isolation: 'unshare', fallbacks: ['forced'] },
    });
    try {
      expect(fallback.host.fallbacks).toEqual(['forced']);
      const fn = fallback.define(
        'watchdog',
        `import fs from 'node:fs';
         import os from 'node:os';
         const kept = [];
         export default async (request) => {
           if (new URL(request.url).searchParams.has('fill')) {
             for (;;) { const b = Buffer.alloc(16 * 1024 * 1024); b.fill(7); kept.push(b); await new Promise((r) => setTimeout(r, 5)); }
           }
           let passwd = 'ALLOWED';
           try { fs.readFileSync('/etc/passwd') } catch (e) { passwd = e.code }
           return Response.json({ passwd, interfaces: Object.keys(os.networkInterfaces()), uid: process.getuid() });
         }`,
      );
      const { text } = await call(fallback.host, fn);
      expect(JSON.parse(text)).toEqual({
        passwd: 'ERR_ACCESS_DENIED',
        interfaces: ['lo'],
        uid: probed.dropToNobody ? 65534 : process.getuid!(),
      });
      const error = await callFails(fallback.host, fn, { query: 'fill' });
      expect((error as FunctionHostError).kind).toBe('out_of_memory');
      const stopped = fallback.events.find((e) => e.type === 'instance_stopped');
      expect((stopped as { peakMemoryBytes: number }).peakMemoryBytes).toBeGreaterThan(512 * 1024 * 1024);
    } finally {
      await fallback.host.stop();
    }
  });

  it('without any namespace: the instance still answers, behind --permission, with the egress proxy on its own port', async () => {
    const probed = probeSandbox();
    const fallback = startHost({ prefork: 0, capabilities: { ...probed, isolation: 'none', fallbacks: ['forced'] } });
    try {
      const fn = fallback.define(
        'no-namespace',
        `import fs from 'node:fs';
         export default async () => {
           let passwd = 'ALLOWED';
           try { fs.readFileSync('/etc/passwd') } catch (e) { passwd = e.code }
           let fetched;
           try { await fetch('https://10.0.0.1/'); fetched = 'ALLOWED' } catch (e) { fetched = 'refused' }
           return Response.json({ passwd, fetched, proxy: process.env.HTTPS_PROXY });
         }`,
      );
      const { text } = await call(fallback.host, fn);
      const seen = JSON.parse(text);
      expect(seen).toMatchObject({ passwd: 'ERR_ACCESS_DENIED', fetched: 'refused' });
      expect(seen.proxy).not.toBe('http://127.0.0.1:3128');
      expect(fallback.events).toContainEqual(
        expect.objectContaining({ type: 'limit', kind: 'egress_refused', reason: 'private_address', target: '10.0.0.1:443' }),
      );
    } finally {
      await fallback.host.stop();
    }
  });
});
