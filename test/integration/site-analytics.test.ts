import { randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { dayOf, siteAnalytics } from '../../lib/sites/analytics.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { deploy, uniqueName, uniqueSite } from '../support/uploads.ts';

/**
 * Site analytics (Project `analytics_enabled`): serving counts each reply, a
 * flush writes the counts (tests flush by hand instead of waiting for the
 * timer), a team member reads a date range, and switching analytics off stops
 * collection and deletes the project's rows, also against a racing flush.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let projectId: string;
let host: string;
const files = uniqueSite({ 'about.html': '<h1>About us</h1>', '404.html': '<h1>Nothing here</h1>' });
const bytesOf = (path: string) => files.files.find((f) => f.path === path)!.size;

const today = () => dayOf(new Date());
const yesterday = () => dayOf(new Date(Date.now() - 86_400_000));
const analytics = (token: string | undefined, query = `?from=${yesterday()}&to=${today()}`, id = projectId) =>
  platform.api('GET', `/api/v1/projects/${id}/analytics${query}`, { token });
const get = (path: string, options: { method?: string; headers?: Record<string, string> } = {}) =>
  siteRequest(platform.port, host, path, options);
const setAnalytics = (on: boolean) =>
  platform.api('PATCH', `/api/v1/projects/${projectId}`, { token: m.admin.token, body: { analytics_enabled: on } });

async function rowCount(): Promise<number> {
  const out = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.analyticsDay(projectId, '').pk },
      ConsistentRead: true,
    }),
  );
  return out.Count ?? 0;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  const subdomain = `stats-${randomBytes(4).toString('hex')}`;
  const done = await deploy(platform, m.owner.token, files, { name: uniqueName(), subdomain });
  projectId = done.begin.project_id;
  host = `${subdomain}.localhost:${platform.port}`;
  // The worker's platform may have counted other files' replies: its 10 s timer would then flush between this file's
  // requests and its own flush. Stopped here (the next count starts it again) with an hour between flushes.
  platform.env.SITE_ANALYTICS_FLUSH_MS = '3600000';
  await siteAnalytics.stop();
});
afterAll(async () => {
  // Stopped while this file holds the platform: the next file's counts start the timer again, at its own interval.
  await siteAnalytics.stop();
  await platform?.stop();
});

describe('site analytics', () => {
  it('counts requests, bytes, status classes and paths per day, written by a flush, never by the reply', async () => {
    const home = await get('/');
    expect(home.status).toBe(200);
    await get('/', { method: 'HEAD' });
    expect((await get('/', { headers: { 'if-none-match': home.headers.etag as string } })).status).toBe(304);
    await get('/about');
    await get('/about?ref=x');
    expect((await get('/nope')).status).toBe(404);
    // Nothing is written until the flush.
    expect(await rowCount()).toBe(0);
    await siteAnalytics.flush();

    const reply = await analytics(m.member.token);
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    expect(data.analytics_enabled).toBe(true);
    expect(data.from).toBe(yesterday());
    expect(data.to).toBe(today());
    const bytes = bytesOf('index.html') + 2 * bytesOf('about.html') + bytesOf('404.html');
    expect(data.totals).toEqual({ requests: 6, bytes, status_classes: { '2xx': 4, '3xx': 1, '4xx': 1, '5xx': 0 } });
    expect(data.days).toEqual([
      { date: yesterday(), requests: 0, bytes: 0, status_classes: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } },
      { date: today(), requests: 6, bytes, status_classes: { '2xx': 4, '3xx': 1, '4xx': 1, '5xx': 0 } },
    ]);
    expect(data.top_paths).toEqual([
      { path: '/', requests: 3 },
      { path: '/about', requests: 2 },
      { path: '/nope', requests: 1 },
    ]);
  });

  it('`to` defaults to today and `from` to 6 days before it; a range reads at most 90 days', async () => {
    const reply = await analytics(m.member.token, '');
    expect(reply.status).toBe(200);
    expect(reply.body.data.to).toBe(today());
    expect(reply.body.data.days).toHaveLength(7);
    expect(reply.body.data.days.at(-1).date).toBe(today());
    const fromOnly = await analytics(m.member.token, `?from=${yesterday()}`);
    expect(fromOnly.body.data.to).toBe(today());
    expect(fromOnly.body.data.days).toHaveLength(2);
    const ninety = await analytics(m.member.token, `?from=2026-01-01&to=2026-03-31`);
    expect(ninety.status).toBe(200);
    expect(ninety.body.data.days).toHaveLength(90);
  });

  it('400 VALIDATION_FAILED for a malformed or impossible day, `to` before `from`, or more than 90 days', async () => {
    for (const query of [
      '?from=2026-13-01',
      '?to=2026-02-30',
      '?from=yesterday',
      '?from=2026-05-02&to=2026-05-01',
      '?from=2026-01-01&to=2026-04-01',
    ]) {
      expectError(await analytics(m.member.token, query), 400, 'VALIDATION_FAILED');
    }
  });

  it('authorization: members, admins, the owner and the team API key read; others get 404, no token 401', async () => {
    for (const actor of [m.member, m.admin, m.owner, m.apiKey]) expect((await analytics(actor.token)).status).toBe(200);
    expectError(await analytics(m.outsider.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await analytics(m.platformAdmin.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await analytics(undefined), 401, 'UNAUTHENTICATED');
    expectError(await analytics(m.member.token, '', 'not-a-uuid'), 404, 'PROJECT_NOT_FOUND');
  });

  it('switching analytics off deletes the rows and stops collection; on again collects again', async () => {
    await get('/about');
    await siteAnalytics.flush();
    expect(await rowCount()).toBeGreaterThan(0);

    expect((await setAnalytics(false)).status).toBe(200);
    expect(await rowCount()).toBe(0);
    await get('/');
    await siteAnalytics.flush();
    expect(await rowCount()).toBe(0);
    const off = await analytics(m.member.token);
    expect(off.body.data.analytics_enabled).toBe(false);
    expect(off.body.data.totals.requests).toBe(0);
    expect(off.body.data.top_paths).toEqual([]);

    expect((await setAnalytics(true)).status).toBe(200);
    await get('/');
    await siteAnalytics.flush();
    const on = await analytics(m.member.token);
    expect(on.body.data.totals.requests).toBe(1);
    expect(on.body.data.top_paths).toEqual([{ path: '/', requests: 1 }]);
  });

  it('counts taken before the switch off and flushed after it are dropped, not written back', async () => {
    expect((await setAnalytics(true)).status).toBe(200);
    await get('/about');
    expect((await setAnalytics(false)).status).toBe(200);
    await siteAnalytics.flush();
    expect(await rowCount()).toBe(0);
  });

  it('a flush racing the switch off never leaves rows behind', async () => {
    for (let round = 0; round < 5; round++) {
      expect((await setAnalytics(true)).status).toBe(200);
      await Promise.all(['/', '/about', '/nope', '/about'].map((path) => get(path)));
      const [patched] = await Promise.all([setAnalytics(false), siteAnalytics.flush()]);
      expect(patched.status).toBe(200);
      await siteAnalytics.flush();
      expect(await rowCount()).toBe(0);
    }
  });

  it('a member cannot switch analytics off (settings are for admins and owners)', async () => {
    const reply = await platform.api('PATCH', `/api/v1/projects/${projectId}`, {
      token: m.member.token,
      body: { analytics_enabled: false },
    });
    expectError(reply, 403, 'FORBIDDEN');
  });
});
