import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import { logger } from '../../lib/logger.ts';
import { deployedObjectKey } from '../../lib/sites/storage-keys.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { putDeploymentFixture, putProjectFixture, setLiveDeployment, siteRequest, type SiteFixture } from '../support/sites.ts';

/**
 * Fast local serving (issue 21): deployed objects are kept in memory by
 * content hash, so a page is served without a storage read once served; an
 * object over the per-object bound is streamed every time; a visitor who
 * disconnects mid-body is a debug line, not an error with a stack.
 */
let platform: TestPlatform;
let site: SiteFixture;
const big = randomBytes(1536 * 1024);

beforeAll(async () => {
  platform = await startTestPlatform();
  site = await putProjectFixture();
  const { deploymentId } = await putDeploymentFixture(site, { 'index.html': `<h1>${randomBytes(8).toString('hex')}</h1>`, 'big.bin': big });
  await setLiveDeployment(site, deploymentId);
  site = { ...site, deploymentId } as SiteFixture & { deploymentId: string };
});
afterAll(() => platform?.stop());

const get = (path: string) => siteRequest(platform.port, `${site.subdomain}.localhost:${platform.port}`, path);
const removeObject = (path: string) =>
  s3().send(
    new DeleteObjectCommand({
      Bucket: config.bucket('sites'),
      Key: deployedObjectKey(site.teamId, site.slug, (site as SiteFixture & { deploymentId: string }).deploymentId, path),
    }),
  );

describe('the site server keeps served objects by content hash', () => {
  it('a page once served is served from memory: the same bytes after its stored object is gone', async () => {
    const first = await get('/');
    expect(first.status).toBe(200);
    await removeObject('index.html');
    const again = await get('/');
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.etag).toBe(first.headers.etag);
  });

  it('an object over SITE_OBJECT_CACHE_MAX_OBJECT_BYTES (1 MiB) is streamed from storage each time, never kept', async () => {
    const first = await get('/big.bin');
    expect(first.status).toBe(200);
    expect(first.body.equals(big)).toBe(true);
    await removeObject('big.bin');
    const again = await get('/big.bin');
    expect(again.status).toBe(500);
    expect(again.headers['x-slipway-error']).toBe('internal_error');
  });
});

describe('a visitor who disconnects mid-body', () => {
  it('is logged at debug level without a stack; nothing at error level', async () => {
    // Larger than what loopback's socket buffers take in at once, so the server is still writing when the visitor goes.
    const { deploymentId } = await putDeploymentFixture(site, { 'index.html': 'x', 'big.bin': randomBytes(24 * 1024 * 1024) });
    await setLiveDeployment(site, deploymentId);
    logger.setLogLevel('DEBUG');
    const lines: string[] = [];
    const capture = (chunk: unknown) => (lines.push(String(chunk)), true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture as never);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture as never);
    try {
      await new Promise<void>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: platform.port, path: '/big.bin', headers: { host: `${site.subdomain}.localhost:${platform.port}` } },
          (res) => {
            // The first chunk, then the visitor is gone.
            res.once('data', () => {
              res.pause();
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', () => undefined);
        req.setTimeout(10_000, () => reject(new Error('no body')));
        req.end();
      });
      for (let i = 0; i < 100 && !lines.some((l) => l.includes('disconnected')); i++) await new Promise((r) => setTimeout(r, 100));
    } finally {
      out.mockRestore();
      err.mockRestore();
      logger.setLogLevel('CRITICAL');
    }
    const entries = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const gone = entries.find((e) => e.message === 'site client disconnected before the reply ended');
    expect(gone).toMatchObject({ level: 'DEBUG', path: '/big.bin' });
    expect(JSON.stringify(gone)).not.toMatch(/stack|\n\s+at /);
    expect(entries.filter((e) => e.level === 'ERROR')).toEqual([]);
  });
});
