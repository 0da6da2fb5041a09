import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freshConfigHome, runCli } from '../support/cli.ts';

/**
 * The CLI's retries against a tiny API stand-in on loopback that answers what
 * each test scripts: which failures are tried again, which never are.
 */
type Script = (req: IncomingMessage, res: ServerResponse, n: number, body: Buffer) => void;

let server: Server | null = null;
const seen: { method: string; url: string; body: Buffer }[] = [];

async function fakeApi(script: Script): Promise<string> {
  seen.length = 0;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method!, url: req.url!, body });
      script(req, res, seen.length, body);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const meta = { request_id: 'r', timestamp: '2026-01-01T00:00:00Z', trace_id: '0'.repeat(32) };
const ok = (res: ServerResponse, data: unknown, status = 200) => json(res, status, { data, meta });
const fail = (res: ServerResponse, status: number, code: string, error: string, headers: Record<string, string> = {}) =>
  json(res, status, { code, details: null, error, meta }, headers);

const projectsCli = (url: string, extra: Record<string, string> = {}) =>
  runCli(['projects', '--json'], { SLIPWAY_API_URL: url, SLIPWAY_TOKEN: 'slw_test', XDG_CONFIG_HOME: freshConfigHome(), ...extra });

const aProject = { id: 'p1', name: 'Site', production_url: 'http://site.localhost:1', live_deployment_id: null };

describe('CLI retries', () => {
  it('503 then 200: retried once, succeeds', async () => {
    const url = await fakeApi((_req, res, n) => (n === 1 ? fail(res, 503, 'SERVICE_UNAVAILABLE', 'Down.') : ok(res, [aProject])));
    const run = await projectsCli(url);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([aProject]);
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/v1/projects?limit=100', 'GET /api/v1/projects?limit=100']);
  });

  it.each([
    [408, 'REQUEST_TIMEOUT'],
    [429, 'RATE_LIMITED'],
    [500, 'INTERNAL_ERROR'],
    [502, 'BAD_GATEWAY'],
    [409, 'IDEMPOTENCY_KEY_IN_PROGRESS'],
  ])('%i %s is retried', async (status, code) => {
    const url = await fakeApi((_req, res, n) =>
      n === 1 ? fail(res, status, code, 'Try again.', status === 429 || status === 409 ? { 'retry-after': '0' } : {}) : ok(res, []),
    );
    expect((await projectsCli(url)).code).toBe(0);
    expect(seen).toHaveLength(2);
  });

  it('a connection cut before any answer is retried', async () => {
    const url = await fakeApi((req, res, n) => (n === 1 ? req.socket.destroy() : ok(res, [])));
    const run = await projectsCli(url);
    expect(run.code).toBe(0);
    expect(seen).toHaveLength(2);
  });

  it('a connection cut in the middle of an answer is retried, not read as the answer', async () => {
    const url = await fakeApi((_req, res, n) => {
      if (n > 1) return ok(res, [aProject]);
      // Headers and half the body, then the connection goes.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"data":[');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const run = await projectsCli(url);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([aProject]);
    expect(seen).toHaveLength(2);
  });

  it.each([
    [400, 'VALIDATION_FAILED', 'The request is invalid.'],
    [401, 'UNAUTHENTICATED', 'Missing or invalid credentials.'],
    [403, 'FORBIDDEN', 'You do not have permission to do this.'],
    [404, 'ROUTE_NOT_FOUND', 'No route matches this path.'],
    [409, 'CONFLICT', 'The request conflicts with the current state.'],
  ])('%i is never retried and is shown as its sentence and code', async (status, code, sentence) => {
    const url = await fakeApi((_req, res) => fail(res, status, code, sentence));
    const run = await projectsCli(url);
    expect(run.code).toBe(1);
    expect(seen).toHaveLength(1);
    expect(run.stderr).toBe(`slipway: ${sentence} (${code})\n`);
    expect(run.stdout).toBe('');
  });

  it('gives up after the last attempt with the last answer, no stack', async () => {
    const url = await fakeApi((_req, res) =>
      fail(res, 503, 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable. Try again later.'),
    );
    const run = await projectsCli(url, { SLIPWAY_RETRY_ATTEMPTS: '3' });
    expect(run.code).toBe(1);
    expect(seen).toHaveLength(3);
    expect(run.stderr).toBe('slipway: The service is temporarily unavailable. Try again later. (SERVICE_UNAVAILABLE)\n');
  });

  it('an API that accepts the request and never answers is given up after the idle timeout, retried, then reported', async () => {
    const url = await fakeApi(() => undefined);
    const run = await projectsCli(url, { SLIPWAY_RETRY_ATTEMPTS: '2', SLIPWAY_HTTP_TIMEOUT_MS: '300' });
    expect(run.code).toBe(1);
    expect(seen).toHaveLength(2);
    expect(run.stderr).toMatch(/^slipway: Could not reach the API at http:\/\/127\.0\.0\.1:\d+: ETIMEDOUT\n$/);
  });

  it('an unreachable API is one sentence, not a stack', async () => {
    const url = await fakeApi((_req, res) => ok(res, []));
    server!.close();
    const run = await projectsCli(url, { SLIPWAY_RETRY_ATTEMPTS: '2' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^slipway: Could not reach the API at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/);
  });

  it('an upload answered 503 is sent again, whole: a large file by PUT, small ones in a batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-site-'));
    // Over the CLI's 1 MiB batch threshold: sent alone, by PUT.
    const content = Buffer.alloc(1_500_000, 7);
    const page = Buffer.from('<h1>hi</h1>');
    writeFileSync(join(dir, 'index.html'), page);
    mkdirSync(join(dir, 'img'));
    writeFileSync(join(dir, 'img', 'big.bin'), content);
    const bigHash = createHash('sha256').update(content).digest('hex');
    const pageHash = createHash('sha256').update(page).digest('hex');
    let putFailed = false;
    let batchFailed = false;
    const url = await fakeApi((req, res, _n, body) => {
      if (req.url === '/api/v1/uploads') {
        const begin = JSON.parse(body.toString()) as { files: { hash: string }[]; project: { name: string } };
        return ok(
          res,
          {
            upload_id: 'u1',
            deployment_id: 'd1',
            project_id: 'p1',
            known_count: 0,
            missing: begin.files.map((f) => f.hash),
            total_bytes_to_send: 0,
            expires_at: '',
          },
          201,
        );
      }
      if (req.method === 'PUT' && req.url === `/api/v1/uploads/u1/files/${bigHash}` && !putFailed) {
        putFailed = true;
        return fail(res, 503, 'SERVICE_UNAVAILABLE', 'Busy.');
      }
      if (req.method === 'POST' && req.url === '/api/v1/uploads/u1/files' && !batchFailed) {
        batchFailed = true;
        return fail(res, 502, 'BAD_GATEWAY', 'Busy.');
      }
      if (req.method === 'PUT') return ok(res, { hash: req.url!.split('/').pop() });
      if (req.method === 'POST' && req.url === '/api/v1/uploads/u1/files')
        return ok(res, { upload_id: 'u1', received: [], received_count: 1 });
      if (req.url === '/api/v1/uploads/u1/finalize')
        return ok(res, { deployment_id: 'd1', project_id: 'p1', status: 'ready', url: 'http://x.localhost:1' });
      fail(res, 404, 'ROUTE_NOT_FOUND', 'No route.');
    });
    const run = await runCli(['deploy', dir, '--json'], {
      SLIPWAY_API_URL: url,
      SLIPWAY_TOKEN: 'slw_test',
      XDG_CONFIG_HOME: freshConfigHome(),
    });
    expect(run.stderr).not.toContain('Error');
    expect(run.code).toBe(0);
    const puts = seen.filter((r) => r.method === 'PUT' && r.url.endsWith(bigHash));
    expect(puts).toHaveLength(2);
    expect(puts[1]!.body.equals(content)).toBe(true);
    const batches = seen.filter((r) => r.method === 'POST' && r.url === '/api/v1/uploads/u1/files');
    expect(batches).toHaveLength(2);
    for (const batch of batches) {
      expect(batch.body.includes(page)).toBe(true);
      expect(batch.body.toString('latin1')).toContain(`name="${pageHash}"`);
      // The large file never travels in a batch.
      expect(batch.body.toString('latin1')).not.toContain(bigHash);
    }
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ files_total: 2, files_sent: 2, bytes_sent: content.length + page.length, url: 'http://x.localhost:1' });
    const begin = JSON.parse(seen[0]!.body.toString());
    expect(begin.project).toEqual({ name: expect.stringMatching(/^slipway-site-/) });
    expect(begin.files.map((f: { path: string }) => f.path)).toEqual(['img/big.bin', 'index.html']);
  });

  it('bytes finalize reports gone are sent, then finalize is called again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-site-'));
    const page = Buffer.from('<h1>again</h1>');
    writeFileSync(join(dir, 'index.html'), page);
    const pageHash = createHash('sha256').update(page).digest('hex');
    let finalizeCalls = 0;
    const url = await fakeApi((req, res) => {
      if (req.url === '/api/v1/uploads') {
        // The platform held the file at begin: nothing to send.
        return ok(
          res,
          { upload_id: 'u1', deployment_id: 'd1', project_id: 'p1', known_count: 1, missing: [], total_bytes_to_send: 0, expires_at: '' },
          201,
        );
      }
      if (req.method === 'POST' && req.url === '/api/v1/uploads/u1/files')
        return ok(res, { upload_id: 'u1', received: [], received_count: 1 });
      if (req.url === '/api/v1/uploads/u1/finalize') {
        if (++finalizeCalls === 1) {
          return json(res, 409, {
            code: 'UPLOAD_INCOMPLETE',
            details: { missing: [pageHash], missing_count: 1 },
            error: 'Some files of the manifest have not been uploaded yet.',
            meta,
          });
        }
        return ok(res, { deployment_id: 'd1', project_id: 'p1', status: 'ready', url: 'http://x.localhost:1' });
      }
      fail(res, 404, 'ROUTE_NOT_FOUND', 'No route.');
    });
    const run = await runCli(['deploy', dir, '--json'], {
      SLIPWAY_API_URL: url,
      SLIPWAY_TOKEN: 'slw_test',
      XDG_CONFIG_HOME: freshConfigHome(),
    });
    expect(run.code).toBe(0);
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /api/v1/uploads',
      'POST /api/v1/uploads/u1/finalize',
      'POST /api/v1/uploads/u1/files',
      'POST /api/v1/uploads/u1/finalize',
      // No functions listing: the folder has no functions/ sources, so it has no functions.
    ]);
    expect(seen[2]!.body.includes(page)).toBe(true);
    expect(JSON.parse(run.stdout)).toMatchObject({ files_sent: 1, bytes_sent: page.length });
  });

  describe('a finalize that publishes over several calls', () => {
    async function deployAgainst(finalize: (n: number, res: ServerResponse) => void) {
      const dir = mkdtempSync(join(tmpdir(), 'slipway-site-'));
      writeFileSync(join(dir, 'index.html'), '<h1>hi</h1>');
      let finalizeCalls = 0;
      const url = await fakeApi((req, res, _n, body) => {
        if (req.url === '/api/v1/uploads') {
          const begin = JSON.parse(body.toString()) as { files: { hash: string }[] };
          return ok(
            res,
            {
              upload_id: 'u1',
              deployment_id: 'd1',
              project_id: 'p1',
              known_count: 0,
              missing: begin.files.map((f) => f.hash),
              total_bytes_to_send: 11,
              expires_at: '',
            },
            201,
          );
        }
        if (req.method === 'PUT' || req.url === '/api/v1/uploads/u1/files') return ok(res, {});
        if (req.url === '/api/v1/uploads/u1/finalize') return finalize(++finalizeCalls, res);
        fail(res, 404, 'ROUTE_NOT_FOUND', 'No route.');
      });
      const run = await runCli(['deploy', dir, '--json'], {
        SLIPWAY_API_URL: url,
        SLIPWAY_TOKEN: 'slw_test',
        XDG_CONFIG_HOME: freshConfigHome(),
        SLIPWAY_RETRY_ATTEMPTS: '2',
      });
      return { run, finalizeCalls: () => finalizeCalls };
    }
    const inProgress = (res: ServerResponse, count: number) =>
      json(
        res,
        503,
        { code: 'PUBLISH_IN_PROGRESS', details: { published_count: count, file_count: 5000 }, error: 'Publishing.', meta },
        { 'retry-after': '0' },
      );

    it('is followed to the end while the published count grows, beyond the attempt budget', async () => {
      const { run, finalizeCalls } = await deployAgainst((n, res) =>
        n <= 5
          ? inProgress(res, n * 500)
          : ok(res, { deployment_id: 'd1', project_id: 'p1', status: 'ready', url: 'http://x.localhost:1' }),
      );
      expect(run.code).toBe(0);
      expect(finalizeCalls()).toBe(6);
      expect(JSON.parse(run.stdout).url).toBe('http://x.localhost:1');
    });

    it('gives up when the count stops moving', async () => {
      const { run, finalizeCalls } = await deployAgainst((_n, res) => inProgress(res, 500));
      expect(run.code).toBe(1);
      expect(finalizeCalls()).toBe(4);
      expect(run.stderr).toContain('slipway: Publishing. (PUBLISH_IN_PROGRESS)\n');
    });
  });
});
