import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformCounterKey } from '../../lib/abuse/limits.ts';
import { ABUSE_CATEGORIES } from '../../lib/abuse/reports.ts';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { newDomainRecord } from '../../lib/domains/domains.ts';
import { insertDomain } from '../../lib/domains/records.ts';
import { tableDefinition } from '../../lib/resources.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Spec endpoint 3 (abuse intake, DSA Article 16). This file runs on a
 * moto_server of its own: receipts are read from moto's inspection API, which
 * serializes everything moto holds and would crawl on the run's shared one.
 */
const REPORTS = '/api/v1/public/abuse-reports';
const PER_SUBMITTER = 5;
process.env.ABUSE_REPORTS_PER_SUBMITTER_PER_HOUR = String(PER_SUBMITTER);

let platform: TestPlatform;
let subdomain: string;
let projectId: string;
let customHost: string;
let pendingHost: string;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** Calls the API from a chosen loopback address (all of 127/8 is loopback): each test its own submitter. */
let nextIp = 10;
const freshIp = () => `127.0.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 2}`;
function postFrom(ip: string, body: unknown, options: { raw?: string; contentType?: string } = {}): Promise<Reply> {
  const payload = options.raw ?? JSON.stringify(body);
  const url = new URL(REPORTS, platform.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: ip,
        agent: false,
        headers: { 'content-type': options.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface SentMail {
  subject: string;
  body: string;
  destinations: { ToAddresses?: string[] };
}

async function mailTo(address: string): Promise<SentMail[]> {
  const data = (await (await fetch(`${platform.awsEndpoint}/moto-api/data.json`)).json()) as { ses?: { Message?: SentMail[] } };
  return (data.ses?.Message ?? []).filter((m) => m.destinations.ToAddresses?.includes(address));
}

const email = () => `reporter-${randomBytes(4).toString('hex')}@example.test`;
const siteUrl = (path = '/') => `http://${subdomain}.localhost:${platform.port}${path}`;
const fnUrl = () => `http://hello-${subdomain}.fn.localhost:${platform.port}/?q=1`;

function report(overrides: Record<string, unknown> = {}) {
  return {
    category: 'phishing',
    description: 'This page imitates a bank login and asks for card numbers.',
    reported_urls: [siteUrl('/login.html')],
    reporter_name: 'Rita Reporter',
    reporter_email: email(),
    good_faith_declared: true,
    ...overrides,
  };
}

async function reportItem(id: string) {
  return (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.abuseReport(id), ConsistentRead: true }))).Item;
}

/** How many reports are recorded, from the review queue's index partition. */
async function recordedCount(): Promise<number> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :q',
      ExpressionAttributeValues: { ':q': 'ABUSEREPORTS' },
      Select: 'COUNT',
    }),
  );
  return reply.Count ?? 0;
}

async function platformCount(): Promise<number> {
  const item = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: platformCounterKey(), ConsistentRead: true })))
    .Item;
  return (item?.count as number | undefined) ?? 0;
}

/** Fixed one-hour windows: keep a burst of requests from straddling two of them. */
async function clearOfHourBoundary() {
  const toNextHour = 3600 - (Math.floor(Date.now() / 1000) % 3600);
  if (toNextHour < 20) await new Promise((r) => setTimeout(r, toNextHour * 1000 + 500));
}

beforeAll(async () => {
  // A moto of its own: the sent mail is read from moto's inspection API, which lists all that moto holds.
  platform = await startTestPlatform({ ownAwsEndpoint: true, drivers: [] });
  const roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  subdomain = `abuse-${randomBytes(3).toString('hex')}`;
  const deployed = await deploy(
    platform,
    roles.owner.token,
    site({ 'index.html': '<h1>hosted</h1>', 'functions/hello.js': `export default () => new Response('hi');` }),
    { name: `Abuse ${subdomain}`, subdomain },
  );
  projectId = deployed.begin.project_id;
  // A verified custom domain and a pending one (verification itself is tested in domains.test.ts).
  const now = new Date().toISOString();
  customHost = `www.${subdomain}.example.com`;
  pendingHost = `pending.${subdomain}.example.com`;
  for (const hostname of [customHost, pendingHost]) {
    const record = newDomainRecord({
      teamId: roles.team.id,
      projectId,
      hostname,
      isApex: false,
      mode: 'byo_dns',
      target: `${subdomain}.localhost`,
      now,
    });
    await insertDomain(record);
    if (hostname === customHost) {
      await dynamo().send(
        new UpdateCommand({
          TableName: config.tableName(),
          Key: keys.domain(record.id),
          UpdateExpression: 'SET #status = :verified, verified_at = :now',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':verified': 'verified', ':now': now },
        }),
      );
    }
  }
}, 120_000);
afterAll(() => platform?.stop());

describe('POST /api/v1/public/abuse-reports: recorded reports', () => {
  it('201 with data.id for URLs on a site, a function and a verified custom domain; the report is recorded and a receipt mailed', async () => {
    const reporter = email();
    const urls = [siteUrl('/login.html'), fnUrl(), `https://${customHost}/path`];
    const reply = await postFrom(freshIp(), report({ reporter_email: reporter, reported_urls: urls, category: 'fraud' }));
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(['data', 'meta']);
    expect(reply.body.data).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const item = await reportItem(reply.body.data.id);
    expect(item).toMatchObject({
      id: reply.body.data.id,
      category: 'fraud',
      reported_urls: urls,
      reporter_name: 'Rita Reporter',
      reporter_email: reporter,
      good_faith_declared: true,
      status: 'received',
      receipt_status: 'sent',
      project_ids: [projectId],
    });
    expect((item!.targets as { kind: string }[]).map((t) => t.kind)).toEqual(['site', 'function', 'custom_domain']);
    const link = (
      await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.abuseReportOfProject(projectId, reply.body.data.id) }))
    ).Item;
    expect(link).toMatchObject({ report_id: reply.body.data.id, project_id: projectId, status: 'received' });

    const mails = await mailTo(reporter);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toContain(reply.body.data.id);
    expect(mails[0]!.body).toContain(reply.body.data.id);
    for (const url of urls) expect(mails[0]!.body).toContain(url);
  });

  it('child_sexual_abuse needs no reporter name or e-mail: recorded, and nothing is mailed', async () => {
    const reply = await postFrom(freshIp(), {
      category: 'child_sexual_abuse',
      description: 'Abuse material.',
      reported_urls: [siteUrl()],
      good_faith_declared: true,
    });
    expect(reply.status).toBe(201);
    expect(await reportItem(reply.body.data.id)).toMatchObject({
      reporter_name: null,
      reporter_email: null,
      receipt_status: 'not_requested',
    });
    const empty = await postFrom(freshIp(), report({ category: 'child_sexual_abuse', reporter_name: '', reporter_email: '' }));
    expect(empty.status).toBe(201);
  });

  it('a receipt SES refuses leaves the report recorded (201), marked receipt_status failed', async () => {
    const saved = process.env.MAIL_FROM;
    // An unverified sender: SES answers MessageRejected.
    process.env.MAIL_FROM = 'no-reply@unverified.example';
    try {
      const reporter = email();
      const reply = await postFrom(freshIp(), report({ reporter_email: reporter }));
      expect(reply.status).toBe(201);
      expect(await reportItem(reply.body.data.id)).toMatchObject({ receipt_status: 'failed' });
      expect(await mailTo(reporter)).toHaveLength(0);
    } finally {
      if (saved === undefined) delete process.env.MAIL_FROM;
      else process.env.MAIL_FROM = saved;
    }
  });
});

describe('honeypot', () => {
  it('a filled _hp gets the same 201 shape and records, counts and mails nothing, whatever else the body holds', async () => {
    await clearOfHourBoundary();
    const before = await recordedCount();
    const platformBefore = await platformCount();
    const reporter = email();
    for (const body of [
      report({ _hp: 'http://spam.example', reporter_email: reporter }),
      report({ _hp: 'x', reported_urls: ['https://not-hosted.example.org/'], reporter_email: reporter }),
      { _hp: 'bot', category: 'nonsense' },
    ]) {
      const reply = await postFrom(freshIp(), body);
      expect(reply.status).toBe(201);
      expect(Object.keys(reply.body).sort()).toEqual(['data', 'meta']);
      expect(reply.body.data).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      expect(await reportItem(reply.body.data.id)).toBeUndefined();
    }
    expect(await recordedCount()).toBe(before);
    expect(await platformCount()).toBe(platformBefore);
    expect(await mailTo(reporter)).toHaveLength(0);
    // An empty honeypot is what a browser sends: a real report.
    expect((await postFrom(freshIp(), report({ _hp: '' }))).status).toBe(201);
  });
});

describe('refusals change nothing', () => {
  it('422 ABUSE_REPORT_URL_NOT_HOSTED for a URL on a host the platform does not serve, listing those URLs; nothing fetched or recorded', async () => {
    const before = await recordedCount();
    const platformBefore = await platformCount();
    const notHosted = [
      'https://example.com/phish',
      `http://nosuch-${randomBytes(3).toString('hex')}.localhost:${platform.port}/`,
      `http://nosuch-${subdomain}.fn.localhost:${platform.port}/`,
      `http://deep.${subdomain}.localhost:${platform.port}/`,
      `https://${pendingHost}/`,
      `http://localhost:${platform.port}/`,
      `ftp://${subdomain}.localhost/file`,
      'not a url',
    ];
    for (const url of notHosted) {
      const reply = await postFrom(freshIp(), report({ reported_urls: [siteUrl(), url] }));
      expectError(reply, 422, 'ABUSE_REPORT_URL_NOT_HOSTED');
      expect(reply.body.details).toEqual({ urls: [url] });
    }
    expect(await recordedCount()).toBe(before);
    expect(await platformCount()).toBe(platformBefore);
  });

  it('400 ABUSE_REPORT_INVALID naming each field for an incomplete or invalid report; nothing recorded or counted', async () => {
    const before = await recordedCount();
    const platformBefore = await platformCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ category: undefined }, 'category'],
      [{ category: 'rude' }, 'category'],
      [{ description: undefined }, 'description'],
      [{ description: '   ' }, 'description'],
      [{ reported_urls: undefined }, 'reported_urls'],
      [{ reported_urls: [] }, 'reported_urls'],
      [{ reported_urls: Array.from({ length: 21 }, (_v, i) => siteUrl(`/${i}`)) }, 'reported_urls'],
      [{ reported_urls: 'http://x.localhost/' }, 'reported_urls'],
      [{ good_faith_declared: undefined }, 'good_faith_declared'],
      [{ good_faith_declared: false }, 'good_faith_declared'],
      [{ good_faith_declared: 'yes' }, 'good_faith_declared'],
      [{ reporter_name: undefined }, 'reporter_name'],
      [{ reporter_name: '  ' }, 'reporter_name'],
      [{ reporter_email: undefined }, 'reporter_email'],
      [{ reporter_email: 'not-an-address' }, 'reporter_email'],
      [{ unexpected: 1 }, '(root)'],
    ];
    for (const [change, field] of cases) {
      const reply = await postFrom(freshIp(), report(change));
      expectError(reply, 400, 'ABUSE_REPORT_INVALID');
      expect(reply.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    expectError(await postFrom(freshIp(), null, { raw: '{"category":' }), 400, 'INVALID_JSON');
    expectError(
      await postFrom(freshIp(), null, { raw: 'category=phishing', contentType: 'application/x-www-form-urlencoded' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(await postFrom(freshIp(), null, { raw: '' }), 400, 'ABUSE_REPORT_INVALID');
    expect(await recordedCount()).toBe(before);
    expect(await platformCount()).toBe(platformBefore);
  });

  it('the category list is the documented one', () => {
    expect(ABUSE_CATEGORIES).toContain('child_sexual_abuse');
    expect(new Set(ABUSE_CATEGORIES).size).toBe(ABUSE_CATEGORIES.length);
  });

  it('503 ABUSE_INTAKE_UNAVAILABLE while intake is switched off (ABUSE_INTAKE=off), for any body; nothing recorded', async () => {
    const before = await recordedCount();
    process.env.ABUSE_INTAKE = 'off';
    try {
      expectError(await postFrom(freshIp(), report()), 503, 'ABUSE_INTAKE_UNAVAILABLE');
      expectError(await postFrom(freshIp(), { category: 'x' }), 503, 'ABUSE_INTAKE_UNAVAILABLE');
    } finally {
      delete process.env.ABUSE_INTAKE;
    }
    expect(await recordedCount()).toBe(before);
    expect((await postFrom(freshIp(), report())).status).toBe(201);
  });

  it('503 ABUSE_REPORT_NOT_RECORDED when the table cannot be written, with the envelope and no internals', async () => {
    const saved = platform.env[tableDefinition.envVar]!;
    platform.env[tableDefinition.envVar] = `${saved}-missing`;
    let reply: Reply;
    try {
      reply = await postFrom(freshIp(), report());
    } finally {
      platform.env[tableDefinition.envVar] = saved;
    }
    expectError(reply, 503, 'ABUSE_REPORT_NOT_RECORDED');
    expect(JSON.stringify(reply.body)).not.toMatch(/ResourceNotFound|missing/);
  });
});

describe('limits', () => {
  it(`50 parallel reports from one IP address: exactly ${PER_SUBMITTER} recorded, the rest 429 with Retry-After`, async () => {
    await clearOfHourBoundary();
    const before = await recordedCount();
    const ip = freshIp();
    const replies = await Promise.all(Array.from({ length: 50 }, () => postFrom(ip, report())));
    const created = replies.filter((r) => r.status === 201);
    expect(created).toHaveLength(PER_SUBMITTER);
    for (const r of replies.filter((r) => r.status !== 201)) {
      expectError(r, 429, 'ABUSE_REPORT_RATE_LIMITED');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(3600);
      expect(r.body.details).toMatchObject({ limit: 'ip_address', max_per_hour: PER_SUBMITTER });
    }
    expect(await recordedCount()).toBe(before + PER_SUBMITTER);
    // Another submitter is not held back.
    expect((await postFrom(freshIp(), report())).status).toBe(201);
  }, 60_000);

  it(`20 parallel reports naming one reporter e-mail from different addresses: exactly ${PER_SUBMITTER} recorded and mailed`, async () => {
    await clearOfHourBoundary();
    const reporter = email();
    const replies = await Promise.all(Array.from({ length: 20 }, () => postFrom(freshIp(), report({ reporter_email: reporter }))));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(PER_SUBMITTER);
    for (const r of replies.filter((r) => r.status !== 201)) {
      expectError(r, 429, 'ABUSE_REPORT_RATE_LIMITED');
      expect(r.body.details.limit).toBe('email');
    }
    expect(await mailTo(reporter)).toHaveLength(PER_SUBMITTER);
  }, 60_000);

  it('platform-wide: 30 parallel reports from 30 submitters with 7 left in the hour: exactly 7 recorded', async () => {
    await clearOfHourBoundary();
    const before = await recordedCount();
    const used = await platformCount();
    process.env.ABUSE_REPORTS_PLATFORM_PER_HOUR = String(used + 7);
    try {
      const replies = await Promise.all(Array.from({ length: 30 }, () => postFrom(freshIp(), report())));
      expect(replies.filter((r) => r.status === 201)).toHaveLength(7);
      for (const r of replies.filter((r) => r.status !== 201)) {
        expectError(r, 429, 'ABUSE_REPORT_RATE_LIMITED');
        expect(r.body.details.limit).toBe('platform');
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(await recordedCount()).toBe(before + 7);
      expect(await platformCount()).toBe(used + 7);
    } finally {
      delete process.env.ABUSE_REPORTS_PLATFORM_PER_HOUR;
    }
  }, 60_000);
});
