import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { putDeploymentFixture, putProjectFixture, setLiveDeployment, sha256, siteRequest } from '../support/sites.ts';

/** The local site server compresses as CloudFront does in front of the sites (lib/sites/compression.ts). */
let platform: TestPlatform;
let host: string;
const page = `<!doctype html><h1>Compressed</h1>${'<p>Some words that repeat.</p>'.repeat(100)}`;
const png = Buffer.alloc(5_000, 7);
const files = { 'index.html': page, 'small.css': 'body{margin:0}', 'logo.png': png };

beforeAll(async () => {
  platform = await startTestPlatform();
  const site = await putProjectFixture();
  await setLiveDeployment(site, (await putDeploymentFixture(site, files)).deploymentId);
  host = `${site.subdomain}.localhost:${platform.port}`;
});
afterAll(() => platform?.stop());

const get = (path: string, acceptEncoding?: string) =>
  siteRequest(platform.port, host, path, { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } });

describe('site compression', () => {
  it('text types: brotli when accepted, else gzip, else as stored; Vary on each; the ETag weak once compressed', async () => {
    const br = await get('/', 'gzip, deflate, br');
    expect(br.status).toBe(200);
    expect([br.headers['content-encoding'], br.headers.vary, br.headers.etag]).toEqual(['br', 'Accept-Encoding', `W/"${sha256(page)}"`]);
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(page.length / 4);
    expect(brotliDecompressSync(br.body).toString()).toBe(page);

    const gz = await get('/', 'gzip;q=1.0, br;q=0');
    expect([gz.headers['content-encoding'], gz.headers.vary]).toEqual(['gzip', 'Accept-Encoding']);
    expect(gunzipSync(gz.body).toString()).toBe(page);

    const plain = await get('/');
    expect([plain.headers['content-encoding'], plain.headers.vary, plain.headers.etag]).toEqual([
      undefined,
      'Accept-Encoding',
      `"${sha256(page)}"`,
    ]);
    expect(plain.text).toBe(page);
    // The weak ETag of a compressed copy revalidates it.
    expect(
      (await siteRequest(platform.port, host, '/', { headers: { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) } }))
        .status,
    ).toBe(304);
  });

  it('under 1,000 bytes, or not a text type: sent as stored', async () => {
    const small = await get('/small.css', 'br, gzip');
    expect([small.headers['content-encoding'], small.headers.vary, small.text]).toEqual([undefined, 'Accept-Encoding', 'body{margin:0}']);
    const image = await get('/logo.png', 'br, gzip');
    expect([image.headers['content-encoding'], image.headers.vary]).toEqual([undefined, undefined]);
    expect(image.body.equals(png)).toBe(true);
  });
});
