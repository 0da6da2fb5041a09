import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RUNNER_PATH } from '../../lib/functions/hosts/local/runner-files.ts';
import { nodeBinary } from '../../lib/sandbox/capabilities.ts';

/** The runner's `once` mode (the queued door): one request from a file, one JSON line on fd 3, exit. */
const dir = mkdtempSync(join(tmpdir(), 'slipway-runner-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function once(source: string, input: object) {
  const bundle = join(dir, `b${Math.random().toString(36).slice(2)}.mjs`);
  const request = `${bundle}.json`;
  writeFileSync(bundle, source);
  writeFileSync(request, JSON.stringify(input));
  const child = spawnSync(
    nodeBinary(),
    [RUNNER_PATH, 'once', '--bundle', bundle, '--url', 'http://hello-site.fn.localhost:3000/', '--request', request],
    {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 20_000,
      env: { HOME: dir },
    },
  );
  return { status: child.status, result: JSON.parse((child.output[3] as string).trim()), stderr: child.stderr };
}

describe('runner once', () => {
  it('runs one request and writes status, header pairs, base64 body and outcome', () => {
    const { status, result } = once(
      `export default async (request, context) => {
        context.waitUntil(new Promise(() => {}));
        const headers = new Headers({ 'content-type': 'text/plain' });
        headers.append('set-cookie', 'a=1');
        headers.append('set-cookie', 'b=2');
        return new Response(request.method + ' ' + request.url + ' ' + request.headers.get('x-one') + ' ' + await request.text(), { status: 201, headers });
      }`,
      { method: 'POST', query: 'q=1', headers: [['X-One', 'first']], body: Buffer.from('payload').toString('base64') },
    );
    expect(status).toBe(0);
    expect(result).toEqual({
      status: 201,
      headers: [
        ['content-type', 'text/plain'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
      body: Buffer.from('POST http://hello-site.fn.localhost:3000/?q=1 first payload').toString('base64'),
      outcome: 'response',
    });
  });

  it('a throwing handler is a bare 500 with outcome handler_error; its error goes to stderr only', () => {
    const { result, stderr } = once(`export default () => { throw new Error('hidden detail') }`, { method: 'GET' });
    expect(result).toEqual({ status: 500, headers: [], body: '', outcome: 'handler_error' });
    expect(stderr).toContain('hidden detail');
  });
});
