import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLD_START_HEADER } from '../../lib/functions/door.ts';
import { cliEntry } from '../support/cli.ts';
import { doorRequest } from '../support/door.ts';
import { siteRequest } from '../support/sites.ts';

/**
 * `slipway dev [folder]` (issue 21): the folder's site and functions served on
 * this machine as once deployed, with no platform, account or AWS endpoint in
 * its environment; a saved page is served at once, an edited function answers
 * with its new code.
 */
const dir = mkdtempSync(join(tmpdir(), 'slipway-dev-site-'));
const app = join(dir, 'my-app');
let child: ChildProcess;
let output = '';
let port = 0;

function write(files: Record<string, string>) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(app, path, '..'), { recursive: true });
    writeFileSync(join(app, path), content);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fn = (path = '/') => doorRequest(port, `api-my-app.fn.localhost:${port}`, path);

beforeAll(async () => {
  write({
    'index.html': '<h1>v1</h1>',
    'about.html': '<h1>about</h1>',
    'functions/api.ts': "export default (request: Request) => new Response('one ' + request.url);\n",
    'functions/lib/shared.ts': 'export const x = 1;\n',
  });
  child = spawn(process.execPath, [cliEntry(), 'dev', app, '--port', '0'], {
    cwd: dir,
    // No AWS endpoint, no table, no token: nothing of a platform.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'ERROR' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  for (let i = 0; i < 600 && !/Ctrl-C stops/.test(output); i++) await sleep(100);
  port = Number(/Site: +http:\/\/my-app\.localhost:(\d+)\//.exec(output)?.[1]);
  expect(port, output).toBeGreaterThan(0);
}, 90_000);

afterAll(async () => {
  child?.kill('SIGINT');
  await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
  rmSync(dir, { recursive: true, force: true });
});

describe('slipway dev', { timeout: 60_000 }, () => {
  it("prints the site's and each function's local URL", () => {
    expect(output).toContain(`Site:  http://my-app.localhost:${port}/`);
    expect(output).toContain(`Function api:  http://api-my-app.fn.localhost:${port}/`);
    expect(output).not.toContain('Function shared');
  });

  it('serves the folder by the serving rules, and a saved page at once', async () => {
    const page = await siteRequest(port, `my-app.localhost:${port}`, '/');
    expect(page.status).toBe(200);
    expect(page.text).toBe('<h1>v1</h1>');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await siteRequest(port, `my-app.localhost:${port}`, '/about')).text).toBe('<h1>about</h1>');
    // Function sources are never served, as once deployed.
    expect((await siteRequest(port, `my-app.localhost:${port}`, '/functions/api.ts')).status).toBe(404);
    const etag = page.headers.etag as string;
    expect((await siteRequest(port, `my-app.localhost:${port}`, '/', { headers: { 'if-none-match': etag } })).status).toBe(304);
    write({ 'index.html': '<h1>v2</h1>' });
    const saved = await siteRequest(port, `my-app.localhost:${port}`, '/');
    expect(saved.text).toBe('<h1>v2</h1>');
    expect(saved.headers.etag).not.toBe(etag);
  });

  it('applies _redirects and _headers, an edit at once with no restart, and never serves them', async () => {
    const site = (path: string) => siteRequest(port, `my-app.localhost:${port}`, path);
    expect((await site('/dashboard/settings')).status).toBe(404);
    write({ _redirects: '/old /about 302\n/* /index.html 200\nnonsense\n', _headers: '/*\n  X-Frame-Options: DENY\n' });
    const spa = await site('/dashboard/settings');
    expect(spa.status).toBe(200);
    expect(spa.text).toBe('<h1>v2</h1>');
    expect(spa.headers['x-frame-options']).toBe('DENY');
    const old = await site('/old?x=1');
    expect(old.status).toBe(302);
    expect(old.headers.location).toBe('/about?x=1');
    expect(output).toContain('[rules] _redirects line 3 skipped: expected "from to [status][!]"');
    expect((await site('/_redirects')).status).toBe(404);
    expect((await site('/_headers')).status).toBe(404);
    write({ _redirects: '/old /index.html 301\n', _headers: '/*\n  X-Frame-Options: SAMEORIGIN\n  Cache-Control: no-cache\n' });
    const edited = await site('/old');
    expect(edited.status).toBe(301);
    expect(edited.headers.location).toBe('/index.html');
    expect(edited.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(edited.headers['cache-control']).toBe('no-cache');
    expect((await site('/dashboard/settings')).status).toBe(404);
  });

  it('answers a function through the door: its own URL plus the query, the cold-start header', async () => {
    const first = await fn('/some/path?q=1');
    expect(first.status).toBe(200);
    expect(first.text).toBe(`one http://api-my-app.fn.localhost:${port}/?q=1`);
    expect(first.headers[COLD_START_HEADER]).toBeDefined();
    const warm = await fn('/');
    expect(warm.headers[COLD_START_HEADER]).toBe('false');
    expect((await doorRequest(port, `nope-my-app.fn.localhost:${port}`, '/')).status).toBe(404);
  });

  it('an edited function answers with its new code; a broken edit keeps the last build answering', async () => {
    write({ 'functions/api.ts': "export default (request: Request) => new Response('two ' + new URL(request.url).search);\n" });
    let reply = await fn('/?v=2');
    for (let i = 0; i < 100 && reply.text !== 'two ?v=2'; i++) {
      await sleep(100);
      reply = await fn('/?v=2');
    }
    expect(reply.text).toBe('two ?v=2');

    write({ 'functions/api.ts': 'export default (request: Request) => new Response(;\n' });
    for (let i = 0; i < 100 && !output.includes('[functions] Build failed'); i++) await sleep(100);
    expect(output).toContain('[functions] Build failed');
    expect((await fn('/?v=3')).text).toBe('two ?v=3');
  });
});
