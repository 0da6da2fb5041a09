import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { deploy, putMissing, site, uniqueName } from '../support/uploads.ts';

/**
 * `_redirects` and `_headers` published through the API (compiled at finalize into the route manifest) and served
 * by the site server; in the synthesized mode (vitest.config.ts) the finalize and serve-site Lambdas' own bundles.
 */
let platform: TestPlatform;
let token: string;
let projectId: string;
let host: string;
let withRules: string;
let withoutRules: string;

const REDIRECTS = [
  '# moved pages',
  '/old-blog/* /blog/:splat 301',
  '/docs/:section/:page /manual/:section/:page 302',
  '/go https://example.com/landing 307',
  '/keep-query /target?from=rule 308',
  '/see-other /index.html 303',
  '/about /never-shadowed 301',
  '/legacy.html /about 301!',
  '/gone /errors/gone-page.html 404',
  '/not-here /nope.html 200',
  'this line is not a rule at all',
  '/* /index.html 200',
].join('\n');

const HEADERS = [
  '/*',
  '  X-Frame-Options: DENY',
  '/assets/*',
  '  Cache-Control: public, max-age=31536000, immutable',
  '  X-Frame-Options: SAMEORIGIN',
  '  Set-Cookie: session=stolen',
].join('\n');

const files = {
  'index.html': '<div id="root"></div>',
  'about.html': '<h1>About</h1>',
  'legacy.html': '<h1>Legacy</h1>',
  'errors/gone-page.html': '<h1>Gone</h1>',
  'assets/app.css': 'body{}',
  _redirects: REDIRECTS,
  _headers: HEADERS,
};

const get = (path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  siteRequest(platform.port, host, path, options);

beforeAll(async () => {
  platform = await startTestPlatform();
  const m = await makeTeamWithRoles();
  token = m.member.token;
  const first = await deploy(platform, token, site(files), { name: uniqueName('Rules') });
  projectId = first.begin.project_id;
  withRules = first.begin.deployment_id;
  host = `${first.begin.project.subdomain}.localhost:${platform.port}`;
  // A second deployment without rules files: it goes live, then a rollback brings the rules back.
  const plain = site({ 'index.html': '<h1>No rules</h1>' });
  const begin = await platform.api('POST', `/api/v1/projects/${projectId}/uploads`, { token, body: { files: plain.files } });
  await putMissing(platform, token, begin.body.data.upload_id, begin.body.data.missing, plain);
  await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token });
  withoutRules = begin.body.data.deployment_id;
  await platform.api('POST', `/api/v1/projects/${projectId}/promote`, { token, body: { deployment_id: withRules } });
}, 240_000);
afterAll(() => platform?.stop());

describe('_redirects on the local platform', () => {
  it('a client route of a single-page app serves index.html with 200, the URL unchanged', async () => {
    const reply = await get('/dashboard/settings?tab=2');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(files['index.html']);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers.location).toBeUndefined();
  });

  it('a file of the deployment shadows a rule; `!` overrides the file', async () => {
    const about = await get('/about');
    expect(about.status).toBe(200);
    expect(about.text).toBe(files['about.html']);
    const legacy = await get('/legacy.html');
    expect(legacy.status).toBe(301);
    expect(legacy.headers.location).toBe('/about');
  });

  it.each([
    ['/old-blog/2024/post', 301, '/blog/2024/post'],
    ['/old-blog/2024/post?ref=x', 301, '/blog/2024/post?ref=x'],
    ['/docs/api/intro', 302, '/manual/api/intro'],
    ['/docs/api/intro/', 302, '/manual/api/intro'],
    ['/go?a=b', 307, 'https://example.com/landing?a=b'],
    ['/keep-query?a=b', 308, '/target?from=rule'],
    ['/see-other', 303, '/index.html'],
  ])('%s answers %i with Location %s', async (path, status, location) => {
    const reply = await get(path);
    expect(reply.status).toBe(status);
    expect(reply.headers.location).toBe(location);
  });

  it("a rule answers every method: a posted form gets the redirect, or the rewrite's file; a file alone only GET and HEAD", async () => {
    // A browser's form post: a body and no x-amz-content-sha256 (in the synthesized mode, through the sites distribution).
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const post = await get('/old-blog/x?ref=mail', { method: 'POST', headers: form, body: 'email=a%40example.com' });
    expect(post.status).toBe(301);
    expect(post.headers.location).toBe('/blog/x?ref=mail');
    const rewrite = await get('/dashboard/settings', { method: 'POST', headers: form, body: 'tab=2' });
    expect(rewrite.status).toBe(200);
    expect(rewrite.text).toBe(files['index.html']);
    expect(rewrite.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(rewrite.headers['x-frame-options']).toBe('DENY');
    const head = await get('/dashboard', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const file = await get('/about', { method: 'POST', headers: form, body: 'x=1' });
    expect(file.status).toBe(405);
    expect(file.headers.allow).toBe('GET, HEAD');
  });

  it("a 404 rule serves `to`'s file with 404; a rewrite to a missing file is not found", async () => {
    const gone = await get('/gone');
    expect(gone.status).toBe(404);
    expect(gone.text).toBe(files['errors/gone-page.html']);
    const missing = await get('/not-here');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('404 Not Found');
  });

  it('/_redirects and /_headers answer 404', async () => {
    for (const path of ['/_redirects', '/_headers', '/%5Fredirects']) {
      const reply = await get(path);
      expect(reply.status).toBe(404);
      expect(reply.text).toContain('404 Not Found');
      expect(reply.text).not.toContain('old-blog');
    }
  });
});

describe('_headers on the local platform', () => {
  it('every matching block applies in file order, joining a header set twice; owned headers are never set', async () => {
    const reply = await get('/assets/app.css');
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(reply.headers['x-frame-options']).toBe('DENY, SAMEORIGIN');
    expect(reply.headers['set-cookie']).toBeUndefined();
    expect(reply.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('the platform default stays where no block sets the header; a 304 carries the headers too', async () => {
    const page = await get('/about');
    expect(page.headers['cache-control']).toBe('public, max-age=0, must-revalidate');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const etag = (await get('/assets/app.css')).headers.etag as string;
    const cached = await get('/assets/app.css', { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(cached.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });
});

describe('reported, and moved with the deployment', () => {
  it('GET deployment carries serving_rules with counts and skipped lines', async () => {
    const reply = await platform.api('GET', `/api/v1/projects/${projectId}/deployments/${withRules}`, { token });
    expect(reply.status).toBe(200);
    expect(reply.body.data.serving_rules).toEqual({
      redirects: 10,
      headers: 2,
      skipped: [
        { file: '_redirects', line: 11, reason: 'more than three fields: conditions (query, country, language, role) are not supported' },
        { file: '_headers', line: 6, reason: 'Set-Cookie is set by the platform and cannot be set here' },
      ],
      skipped_count: 2,
    });
    const none = await platform.api('GET', `/api/v1/projects/${projectId}/deployments/${withoutRules}`, { token });
    expect(none.body.data.serving_rules).toEqual({ redirects: 0, headers: 0, skipped: [], skipped_count: 0 });
  });

  it('promote moves the rules with the deployment', async () => {
    await platform.api('POST', `/api/v1/projects/${projectId}/promote`, { token, body: { deployment_id: withoutRules } });
    const plain = await get('/dashboard/settings');
    expect(plain.status).toBe(404);
    expect(plain.headers['x-frame-options']).toBeUndefined();
    await platform.api('POST', `/api/v1/projects/${projectId}/promote`, { token, body: { deployment_id: withRules } });
    const spa = await get('/dashboard/settings');
    expect(spa.status).toBe(200);
    expect(spa.text).toBe(files['index.html']);
    expect(spa.headers['x-frame-options']).toBe('DENY');
  });
});
