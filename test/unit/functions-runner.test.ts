import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRunner, type RunnerCore } from '../support/functions-runner.ts';

/** The runner's core, without its socket server: what every host runs. */
let runner: RunnerCore;
beforeAll(async () => {
  runner = await loadRunner();
});

const request = (url = 'https://hello-site.fn.example/') => new Request(url);

describe('resolving the handler in the spec order', () => {
  const fnA = () => new Response('default function');
  const fnB = () => new Response('default object');
  const fnC = () => new Response('named fetch');
  const fnD = () => new Response('module.exports');

  const answer = async (mod: unknown) => {
    const handler = runner.resolveHandler(mod);
    if (!handler) return null;
    return [handler.shape, await ((await handler.call(request(), {})) as Response).text()];
  };

  it('a default export function comes first', async () => {
    expect(await answer({ default: fnA, fetch: fnC, 'module.exports': fnD })).toEqual(['default_function', 'default function']);
  });

  it('then a default export object with a fetch method', async () => {
    expect(await answer({ default: { fetch: fnB }, fetch: fnC })).toEqual(['default_object_fetch', 'default object']);
  });

  it('then a named export fetch', async () => {
    expect(await answer({ default: { notFetch: true }, fetch: fnC })).toEqual(['named_fetch', 'named fetch']);
    expect(await answer({ fetch: fnC })).toEqual(['named_fetch', 'named fetch']);
  });

  it('then module.exports = function, in the forms a CommonJS module arrives in', async () => {
    expect(await answer({ 'module.exports': fnD })).toEqual(['commonjs_function', 'module.exports']);
    expect(await answer({ default: { __esModule: true, default: fnD } })).toEqual(['commonjs_function', 'module.exports']);
  });

  it('a Hono-like app object keeps its `this`', async () => {
    class App {
      private routes = new Map([['/', 'hono root']]);
      fetch(req: Request) {
        return new Response(this.routes.get(new URL(req.url).pathname) ?? 'none');
      }
    }
    expect(await answer({ default: new App() })).toEqual(['default_object_fetch', 'hono root']);
  });

  it('a module without a handler resolves to nothing', () => {
    expect(runner.resolveHandler({ answer: 42 })).toBeNull();
    expect(runner.resolveHandler({ default: 'text' })).toBeNull();
    expect(runner.resolveHandler(null)).toBeNull();
  });
});

describe('the Request the handler receives', () => {
  it('url is the public URL plus the query string; headers lower-cased; host is the function hostname; hop-by-hop dropped', () => {
    const req = runner.buildRequest({
      method: 'get',
      publicUrl: 'http://hello-site.fn.localhost:3000/',
      query: 'a=1&b=%20two',
      headers: [
        ['Host', 'elsewhere.example'],
        ['X-Custom-Header', 'Value'],
        ['Accept', 'text/html'],
        ['Connection', 'keep-alive'],
        ['Transfer-Encoding', 'chunked'],
        ['x-slipway-internal', '1'],
      ],
    });
    expect(req.url).toBe('http://hello-site.fn.localhost:3000/?a=1&b=%20two');
    expect(req.method).toBe('GET');
    expect([...req.headers]).toEqual([
      ['accept', 'text/html'],
      ['host', 'hello-site.fn.localhost:3000'],
      ['x-custom-header', 'Value'],
    ]);
  });

  it('no query string: the bare public URL', () => {
    const req = runner.buildRequest({ method: 'GET', publicUrl: 'https://hello-site.fn.example/', headers: [] });
    expect(req.url).toBe('https://hello-site.fn.example/');
  });

  it('a query is encoded as the URL query rules say, a "#" in it included; the public URL is the same for each request after', () => {
    const url = (query: string) =>
      runner.buildRequest({ method: 'GET', publicUrl: 'https://hello-site.fn.example/', query, headers: [] }).url;
    expect(url('q=a b&c="d"')).toBe('https://hello-site.fn.example/?q=a%20b&c=%22d%22');
    expect(url('x=1#not-a-fragment')).toBe('https://hello-site.fn.example/?x=1%23not-a-fragment');
    expect(url('?lead=1')).toBe('https://hello-site.fn.example/?lead=1');
    expect(runner.buildRequest({ method: 'GET', publicUrl: 'https://other-site.fn.example/', query: 'z=2', headers: [] }).url).toBe(
      'https://other-site.fn.example/?z=2',
    );
    expect(url('')).toBe('https://hello-site.fn.example/');
  });

  it('a POST body streams in from a Node stream', async () => {
    const req = runner.buildRequest({
      method: 'POST',
      publicUrl: 'https://hello-site.fn.example/',
      headers: [['content-type', 'text/plain']],
      body: Readable.from([Buffer.from('one '), Buffer.from('two')]),
    });
    expect(await req.text()).toBe('one two');
  });
});

describe('calling the handler', () => {
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const invoke = (fn: (...args: unknown[]) => unknown) =>
    runner.invokeHandler({ shape: 'test', call: fn }, request(), runner.createContext({ log }).context, { log });

  it('a Response or a promise of one is `response`', async () => {
    expect((await invoke(() => new Response('a'))).outcome).toBe('response');
    expect((await invoke(async () => new Response('b'))).outcome).toBe('response');
  });

  it('a throw or a rejection is handler_error, logged; the reply is a bare 500 without the error text', async () => {
    const thrown = await invoke(() => {
      throw new Error('kaboom in /srv/secret.js');
    });
    const rejected = await invoke(async () => Promise.reject(new Error('rejected detail')));
    expect([thrown.outcome, rejected.outcome]).toEqual(['handler_error', 'handler_error']);
    expect(logs.join('\n')).toContain('kaboom in /srv/secret.js');
    expect(logs.join('\n')).toContain('rejected detail');
    const reply = await runner.collectReply(thrown);
    expect(reply).toEqual({ status: 500, headers: [], body: '', outcome: 'handler_error' });
    expect(runner.replyHead(thrown)).toEqual({
      status: 500,
      headers: [
        [runner.OUTCOME_HEADER, 'handler_error'],
        ['content-length', '0'],
      ],
    });
  });

  it('anything but a Response is invalid_response', async () => {
    for (const value of [undefined, 'text', { status: 200, body: 'x' }, new Blob(['x'])]) {
      const result = await invoke(() => value);
      expect(result.outcome).toBe('invalid_response');
      expect(runner.replyHead(result).status).toBe(500);
    }
  });

  it('several Set-Cookie stay several header pairs; the outcome header says response', async () => {
    const headers = new Headers({ 'content-type': 'text/plain', 'x-slipway-forged': 'no' });
    headers.append('set-cookie', 'a=1; Path=/');
    headers.append('set-cookie', 'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT');
    const result = await invoke(() => new Response('cookies', { status: 202, headers }));
    expect(runner.replyHead(result)).toEqual({
      status: 202,
      headers: [
        ['content-type', 'text/plain'],
        ['set-cookie', 'a=1; Path=/'],
        ['set-cookie', 'b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT'],
        [runner.OUTCOME_HEADER, 'response'],
      ],
    });
    const collected = await runner.collectReply(result);
    expect(Buffer.from(collected.body, 'base64').toString()).toBe('cookies');
  });
});

describe('context', () => {
  it('env is an empty frozen object', () => {
    const { context } = runner.createContext();
    expect(Object.keys(context.env)).toEqual([]);
    expect(Object.isFrozen(context.env)).toBe(true);
    expect(Object.isFrozen(context)).toBe(true);
  });

  it('waitUntil keeps work running; a rejection is logged, never thrown nor unhandled', async () => {
    const logs: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { context, pending } = runner.createContext({ log: (line) => logs.push(line) });
      let done = false;
      expect(() => context.waitUntil(new Promise((resolve) => setTimeout(resolve, 20)).then(() => (done = true)))).not.toThrow();
      expect(() => context.waitUntil(Promise.reject(new Error('background failure')))).not.toThrow();
      expect(() => context.waitUntil('not a promise')).not.toThrow();
      expect(done).toBe(false);
      await Promise.all([...pending]);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(done).toBe(true);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toContain('waitUntil promise rejected');
      expect(logs[0]).toContain('background failure');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
