import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../../lib/aws/clients.ts';
import { s3 } from '../../lib/aws/s3.ts';
import { keys } from '../../lib/db/keys.ts';
import { config } from '../../lib/config.ts';
import { cloudFrontEvent, invokeServeSite } from '../support/serve-site-lambda.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { routeManifestKey } from '../../lib/sites/storage-keys.ts';
import { putDeploymentFixture, putProjectFixture, setLiveDeployment, sha256, siteRequest, type SiteFixture } from '../support/sites.ts';

let platform: TestPlatform;
let site: SiteFixture;
let host: string;
let deploymentId: string;

const files = {
  'index.html': '<h1>Home</h1>',
  'about.html': '<h1>About</h1>',
  'docs/index.html': '<h1>Docs</h1>',
  'docs/guide.html': '<h1>Guide</h1>',
  'style.css': 'body { color: red }',
  'app.js': 'console.log(1)',
  LICENSE: 'MIT',
  '404.html': '<h1>Custom not found</h1>',
  'with space/ü.txt': 'unicode path',
};

const get = (path: string, options: { method?: string; headers?: Record<string, string> } = {}, h = host) =>
  siteRequest(platform.port, h, path, options);

beforeAll(async () => {
  platform = await startTestPlatform();
  site = await putProjectFixture();
  deploymentId = (await putDeploymentFixture(site, files)).deploymentId;
  await setLiveDeployment(site, deploymentId);
  host = `${site.subdomain}.localhost:${platform.port}`;
});
afterAll(() => platform?.stop());

describe('serving: path rules', () => {
  it.each([
    ['/', 'index.html'],
    ['/?utm=1', 'index.html'],
    ['/index.html', 'index.html'],
    ['/about', 'about.html'],
    ['/about.html', 'about.html'],
    ['/docs', 'docs/index.html'],
    ['/docs/', 'docs/index.html'],
    ['/docs/guide', 'docs/guide.html'],
    ['/docs/../about', 'about.html'],
    ['/LICENSE', 'LICENSE'],
    ['/with%20space/%C3%BC.txt', 'with space/ü.txt'],
  ])('%s serves %s', async (path, file) => {
    const reply = await get(path);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(files[file as keyof typeof files]);
    expect(reply.headers.etag).toBe(`"${sha256(files[file as keyof typeof files])}"`);
  });

  it('content types come from the route manifest', async () => {
    expect((await get('/')).headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await get('/style.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await get('/app.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get('/LICENSE')).headers['content-type']).toBe('application/octet-stream');
  });

  it('a missing path answers 404 with the deployment 404.html', async () => {
    for (const path of ['/nope', '/nope.png', '/docs/missing/', '/about/']) {
      const reply = await get(path);
      expect(reply.status).toBe(404);
      expect(reply.text).toBe('<h1>Custom not found</h1>');
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  });

  it('a missing path on a deployment without 404.html answers a plain 404 page', async () => {
    const bare = await putProjectFixture();
    const { deploymentId: id } = await putDeploymentFixture(bare, { 'index.html': 'bare' });
    await setLiveDeployment(bare, id);
    const reply = await get('/nope', {}, `${bare.subdomain}.localhost:${platform.port}`);
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.text).toContain('404 Not Found');
    expect(reply.text).not.toContain('"code"');
  });
});

describe('serving: ETag, HEAD and methods', () => {
  it('If-None-Match with the ETag answers 304 with no body', async () => {
    const etag = `"${sha256(files['style.css'])}"`;
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const reply = await get('/style.css', { headers: { 'if-none-match': value } });
      expect(reply.status).toBe(304);
      expect(reply.headers.etag).toBe(etag);
      expect(reply.body.length).toBe(0);
    }
    const changed = await get('/style.css', { headers: { 'if-none-match': '"stale"' } });
    expect(changed.status).toBe(200);
    expect(changed.text).toBe(files['style.css']);
  });

  it('HEAD answers the headers of GET and no body', async () => {
    const reply = await get('/about', { method: 'HEAD' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-length']).toBe(String(Buffer.byteLength(files['about.html'])));
    expect(reply.headers.etag).toBe(`"${sha256(files['about.html'])}"`);
    expect(reply.body.length).toBe(0);
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('%s answers 405 with Allow: GET, HEAD', async (method) => {
    const reply = await get('/', { method });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('GET, HEAD');
  });
});

describe('serving: nothing outside the deployment folder', () => {
  beforeAll(async () => {
    // Objects a traversal would aim at: beside the deployment folder, in another project and another team.
    const put = (key: string) => s3().send(new PutObjectCommand({ Bucket: config.bucket('sites'), Key: key, Body: 'SECRET' }));
    await put(`${site.teamId}/${site.slug}/secret.txt`);
    await put(`${site.teamId}/secret.txt`);
    await put('secret.txt');
  });

  it.each([
    '/../secret.txt',
    '/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/%2E%2E/%2e%2e/secret.txt',
    '/docs/..%2f..%2fsecret.txt',
    '/..%2fsecret.txt',
    '/..%5csecret.txt',
    '/%2e%2e%5c%2e%2e%5csecret.txt',
    `/../${deploymentId}.route-manifest.json`,
    '/%00',
    '/%ff',
  ])('%s does not escape', async (path) => {
    const reply = await get(path);
    expect(reply.status).toBe(404);
    expect(reply.text).not.toContain('SECRET');
    expect(reply.text).not.toContain('project_slug');
  });
});

describe('serving: hosts and projects', () => {
  it('the port and the case of the host are ignored', async () => {
    expect((await get('/', {}, site.subdomain.toUpperCase() + '.LOCALHOST')).text).toBe(files['index.html']);
    expect((await get('/', {}, `${site.subdomain}.localhost:1`)).text).toBe(files['index.html']);
  });

  it('an unknown subdomain answers 404', async () => {
    const reply = await get('/', {}, `nobody-here-${Date.now()}.localhost:${platform.port}`);
    expect(reply.status).toBe(404);
    expect(reply.text).toContain('404 Not Found');
  });

  it('a project without a live deployment answers 404', async () => {
    const empty = await putProjectFixture();
    await putDeploymentFixture(empty, { 'index.html': 'not live' });
    const reply = await get('/', {}, `${empty.subdomain}.localhost:${platform.port}`);
    expect(reply.status).toBe(404);
    expect(reply.text).not.toContain('not live');
  });

  it('a subdomain hold the project no longer answers to serves nothing', async () => {
    const moved = await putProjectFixture();
    const { deploymentId: id } = await putDeploymentFixture(moved, { 'index.html': 'moved away' });
    await setLiveDeployment(moved, id);
    const stale = `stale-${moved.subdomain}`;
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: { ...keys.subdomainHold(stale), project_id: moved.projectId, team_id: moved.teamId },
      }),
    );
    const reply = await get('/', {}, `${stale}.localhost:${platform.port}`);
    expect(reply.status).toBe(404);
    expect(reply.text).not.toContain('moved away');
  });

  it('a route manifest whose slug differs from the project slug answers 500 slug_mismatch', async () => {
    const renamed = await putProjectFixture();
    const { deploymentId: id } = await putDeploymentFixture(renamed, { 'index.html': 'x' }, { manifestSlug: 'old-slug' });
    await setLiveDeployment(renamed, id);
    const reply = await get('/', {}, `${renamed.subdomain}.localhost:${platform.port}`);
    expect(reply.status).toBe(500);
    expect(reply.text).toBe('slug_mismatch\n');
    expect(reply.headers['x-slipway-error']).toBe('slug_mismatch');
  });

  it('pointing production at another deployment takes effect on the next request', async () => {
    const moving = await putProjectFixture();
    const first = await putDeploymentFixture(moving, { 'index.html': 'one' });
    const second = await putDeploymentFixture(moving, { 'index.html': 'two' });
    const h = `${moving.subdomain}.localhost:${platform.port}`;
    await setLiveDeployment(moving, first.deploymentId);
    expect((await get('/', {}, h)).text).toBe('one');
    await setLiveDeployment(moving, second.deploymentId);
    expect((await get('/', {}, h)).text).toBe('two');
    await setLiveDeployment(moving, first.deploymentId);
    expect((await get('/', {}, h)).text).toBe('one');
  });

  it('bare localhost is the API and *.fn.localhost is not a site', async () => {
    const api = await get('/', {}, `localhost:${platform.port}`);
    expect(api.status).toBe(404);
    expect(JSON.parse(api.text).code).toBe('ROUTE_NOT_FOUND');
    const fn = await get('/', {}, `hello-${site.subdomain}.fn.localhost:${platform.port}`);
    expect(fn.text).not.toBe(files['index.html']);
  });
});

describe('the serve-site Lambda (function URL event, response stream)', () => {
  /** A function URL event as CloudFront forwards it: the URL's own Host, the site host in x-slipway-host. */
  const event = (path: string, query = '', method = 'GET', headers: Record<string, string> = {}) =>
    cloudFrontEvent(`${site.subdomain}.localhost`, path, query, method, headers);

  async function invoke(e: APIGatewayProxyEventV2) {
    const reply = await invokeServeSite(e);
    return { ...reply, body: reply.body.toString('utf8') };
  }

  it('routes on x-slipway-host and streams the object', async () => {
    const reply = await invoke(event('/docs/guide', 'a=1'));
    expect(reply.statusCode).toBe(200);
    expect(reply.body).toBe(files['docs/guide.html']);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers.etag).toBe(`"${sha256(files['docs/guide.html'])}"`);
  });

  it('answers 304, 404.html and 405 as the local host does', async () => {
    const etag = `"${sha256(files['index.html'])}"`;
    expect((await invoke(event('/', '', 'GET', { 'if-none-match': etag }))).statusCode).toBe(304);
    const missing = await invoke(event('/missing'));
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe(files['404.html']);
    const post = await invoke(event('/', '', 'POST'));
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe('the serve-site Lambda behind the public URL (methods other than GET and HEAD)', () => {
  const event = (headers: Record<string, string> = {}) => cloudFrontEvent(`${site.subdomain}.localhost`, '/', '', 'POST', headers);

  it("answers only with the distribution's origin header when it holds the secret; without the secret, as before", async () => {
    process.env.SITE_ORIGIN_SECRET = 'origin-secret-of-this-test';
    try {
      const attempts: Record<string, string>[] = [{}, { 'x-slipway-origin-secret': 'guessed' }, { 'x-slipway-origin-secret': '' }];
      for (const headers of attempts) {
        const refused = await invokeServeSite(event(headers));
        expect(refused.statusCode).toBe(403);
        expect(refused.body.toString('utf8')).toBe('Forbidden\n');
        expect(refused.headers['cache-control']).toBe('no-store');
      }
      const served = await invokeServeSite(event({ 'x-slipway-origin-secret': 'origin-secret-of-this-test' }));
      expect(served.statusCode).toBe(405);
      expect(served.headers.allow).toBe('GET, HEAD');
    } finally {
      delete process.env.SITE_ORIGIN_SECRET;
    }
    expect((await invokeServeSite(event())).statusCode).toBe(405);
  });
});

describe('files unchanged since an earlier deployment', () => {
  it('are served from the earlier deployment folder the route manifest names', async () => {
    const project = await putProjectFixture();
    const earlier = await putDeploymentFixture(project, { 'index.html': 'home', 'logo.svg': '<svg/>' });
    const later = await putDeploymentFixture(project, { 'index.html': 'home v2' });
    // The later deployment reuses the earlier logo, under another name too.
    later.manifest.files['logo.svg'] = { ...earlier.manifest.files['logo.svg']!, object: `${earlier.deploymentId}/logo.svg` };
    later.manifest.files['img/logo-copy.svg'] = { ...earlier.manifest.files['logo.svg']!, object: `${earlier.deploymentId}/logo.svg` };
    await s3().send(
      new PutObjectCommand({
        Bucket: config.bucket('sites'),
        Key: routeManifestKey(project.teamId, project.slug, later.deploymentId),
        Body: JSON.stringify(later.manifest),
      }),
    );
    await setLiveDeployment(project, later.deploymentId);
    const h = `${project.subdomain}.localhost:${platform.port}`;
    expect((await get('/', {}, h)).text).toBe('home v2');
    for (const path of ['/logo.svg', '/img/logo-copy.svg']) {
      const reply = await get(path, {}, h);
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('<svg/>');
      expect(reply.headers.etag).toBe(`"${sha256('<svg/>')}"`);
    }
  });

  it('a reference that would leave the project folder serves nothing', async () => {
    const project = await putProjectFixture();
    const { deploymentId, manifest } = await putDeploymentFixture(project, { 'index.html': 'home' });
    await s3().send(new PutObjectCommand({ Bucket: config.bucket('sites'), Key: `${project.teamId}/secret.txt`, Body: 'SECRET' }));
    manifest.files['steal.txt'] = {
      hash: sha256('SECRET'),
      size: 6,
      content_type: 'text/plain',
      object: `${deploymentId}/../../secret.txt`,
    };
    await s3().send(
      new PutObjectCommand({
        Bucket: config.bucket('sites'),
        Key: routeManifestKey(project.teamId, project.slug, deploymentId),
        Body: JSON.stringify(manifest),
      }),
    );
    await setLiveDeployment(project, deploymentId);
    const reply = await get('/steal.txt', {}, `${project.subdomain}.localhost:${platform.port}`);
    expect(reply.status).toBe(500);
    expect(reply.text).toBe('internal_error\n');
  });
});
