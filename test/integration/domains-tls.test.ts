import { randomBytes } from 'node:crypto';
import { DescribeCertificateCommand } from '@aws-sdk/client-acm';
import { GetDistributionCommand, ListDistributionsCommand, ListTagsForResourceCommand } from '@aws-sdk/client-cloudfront';
import { GetHostedZoneCommand, ListResourceRecordSetsCommand } from '@aws-sdk/client-route-53';
import { DeleteMessageCommand, GetQueueAttributesCommand, GetQueueUrlCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acm } from '../../lib/aws/acm.ts';
import { dynamo } from '../../lib/aws/clients.ts';
import { cloudfront } from '../../lib/aws/cloudfront.ts';
import { route53 } from '../../lib/aws/route53.ts';
import { sqs } from '../../lib/aws/sqs.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { queueDefinitions } from '../../lib/resources.ts';
import { type DomainItem, updateDomain } from '../../lib/domains/records.ts';
import { attemptTls, handleSslMessage, SSL_ERROR_CODES } from '../../lib/domains/tls.ts';
import { errorCatalogue } from '../../lib/errors/all.ts';
import { createApiKey } from '../../lib/identity/credential-records.ts';
import { queueDriver } from '../../lib/local/queue-driver.ts';
import { workers } from '../../lib/workers.ts';
import { distributionGeoRestriction } from '../support/cdn.ts';
import { startTestDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, uniqueName, uniqueSite } from '../support/uploads.ts';
import { scaled, until } from '../support/wait.ts';

/**
 * TLS of custom domains (issue 10 item 3): a verified domain gets an ACM
 * certificate and its own CloudFront distribution, through the SSL-retries
 * worker and POST /domains/{id}/retry-ssl, against moto's ACM, CloudFront,
 * Route 53 and SQS. This file runs its own moto_server so that certificates
 * validate after MOTO_ACM_VALIDATION_WAIT (3 s) and no other file's worker
 * reads its queues. A failing certificate is a real one: moto's stays
 * PENDING_VALIDATION for 3 s, and with SSL_VALIDATION_TIMEOUT_SECONDS=0 the
 * attempt gives up on it at its first look (VALIDATION_TIMED_OUT), as it gives
 * up in the cloud on a certificate whose validation CNAME never appears.
 */
let platform: TestPlatform;
let dns: TestDnsServer;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let project: { id: string; subdomain: string };
let otherTeamKey: string;

const label = () => `t${randomBytes(5).toString('hex')}`;
const stored = async (id: string) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.domain(id), ConsistentRead: true }))).Item as DomainItem;

const add = (body: unknown, token = m.admin.token) => platform.api('POST', `/api/v1/projects/${project.id}/domains`, { token, body });
const verify = (id: string, token = m.member.token) => platform.api('POST', `/api/v1/domains/${id}/verify`, { token });
const read = (id: string, token = m.member.token) => platform.api('GET', `/api/v1/domains/${id}`, { token });
const retrySsl = (id: string, token: string | null = m.member.token) =>
  platform.api('POST', `/api/v1/domains/${id}/retry-ssl`, { token: token ?? undefined });

const SPEC_FIELDS = [
  'id',
  'team_id',
  'project_id',
  'domain',
  'is_apex',
  'connection_mode',
  'status',
  'verification_token',
  'verified_at',
  'last_verification_attempt',
  'ns_delegated_at',
  'created_at',
  'updated_at',
  'deleted_at',
  'dns_records',
  'ssl_status',
  'ssl_attempts',
  'ssl_error',
  'ssl_error_code',
  'ssl_issued_at',
  'ssl_last_attempt_at',
  'ssl_provisioning_started_at',
  'geo_mode',
  'geo_countries',
  'supports_geo_filtering',
  'pull_zone_id',
  'cdn_dns_ns1',
  'cdn_dns_ns2',
  'cdn_dns_zone_id',
];
/** The spec: retry-ssl's domain omits debug_url, dns_records, is_apex, next_retry_at and supports_geo_filtering. */
const RETRY_SSL_FIELDS = SPEC_FIELDS.filter((f) => !['dns_records', 'is_apex', 'supports_geo_filtering'].includes(f));

/** The short test schedule: retries after 1 s then 2 s (capped), three attempts per chain, a look every second. */
const SHORT_SCHEDULE = {
  SSL_RETRY_BASE_DELAY_SECONDS: '1',
  SSL_RETRY_MAX_DELAY_SECONDS: '2',
  SSL_MAX_ATTEMPTS: '3',
  SSL_CHECK_INTERVAL_SECONDS: '1',
  SSL_VALIDATION_TIMEOUT_SECONDS: '60',
};

async function waitFor(id: string, until: (d: any) => boolean, timeoutMs = 20_000, seen?: (d: any) => void): Promise<any> {
  const deadline = Date.now() + scaled(timeoutMs);
  let last: any;
  while (Date.now() < deadline) {
    last = (await read(id)).body.data;
    seen?.(last);
    if (until(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`domain ${id} did not reach the state in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

/** A byo_dns domain verified through the API (its TXT record served by the test DNS server). */
async function verifiedDomain(): Promise<any> {
  const d = (await add({ domain: `www.${label()}.com` })).body.data;
  dns.set(`_slipway-challenge.${d.domain}`, 'TXT', [d.verification_token]);
  const reply = await verify(d.id);
  expect(reply.body.data.status).toBe('verified');
  return reply.body.data;
}

/** A domain marked verified in the table directly: no first attempt is queued, so the test alone drives it. */
async function verifiedQuietly(): Promise<any> {
  const d = (await add({ domain: `q.${label()}.com` })).body.data;
  const at = new Date().toISOString();
  await updateDomain(d.id, 'pending_verification', { status: 'verified', verified_at: at, updated_at: at });
  return (await read(d.id)).body.data;
}

/** The distributions serving a hostname (moto's list summaries carry no aliases, so each is read). */
async function distributionsFor(hostname: string): Promise<string[]> {
  const ids = ((await cloudfront().send(new ListDistributionsCommand({}))).DistributionList?.Items ?? []).map((x) => x.Id!);
  const found: string[] = [];
  for (const id of ids) {
    // The file's tests run at once: a distribution listed here may be deleted by another before it is read.
    const read = await cloudfront()
      .send(new GetDistributionCommand({ Id: id }))
      .catch((error: { name?: string }) => {
        if (error.name === 'NoSuchDistribution') return null;
        throw error;
      });
    if (read?.Distribution?.DistributionConfig?.Aliases?.Items?.includes(hostname)) found.push(id);
  }
  return found;
}

async function deadLetterUrl(): Promise<string> {
  const attrs = await sqs().send(
    new GetQueueAttributesCommand({ QueueUrl: config.queueUrl('sslRetries'), AttributeNames: ['RedrivePolicy'] }),
  );
  const arn = JSON.parse(attrs.Attributes!.RedrivePolicy!).deadLetterTargetArn as string;
  return (await sqs().send(new GetQueueUrlCommand({ QueueName: arn.split(':').pop()! }))).QueueUrl!;
}

beforeAll(async () => {
  dns = await startTestDnsServer();
  // moto's certificates validate this long after they are requested (read by the moto_server this file starts).
  process.env.MOTO_ACM_VALIDATION_WAIT = '3';
  platform = await startTestPlatform({
    ownAwsEndpoint: true,
    drivers: [() => queueDriver({ rows: workers.filter((w) => w.name === 'ssl-retries') })],
  });
  delete process.env.MOTO_ACM_VALIDATION_WAIT;
  m = await makeTeamWithRoles();
  otherTeamKey = await createApiKey(m.otherTeam.id);
  const subdomain = `tls-${randomBytes(4).toString('hex')}`;
  const done = await deploy(platform, m.owner.token, uniqueSite(), { name: uniqueName('TLS'), subdomain });
  project = { id: done.begin.project_id as string, subdomain };
}, 120_000);
beforeEach(() => {
  process.env.DNS_RESOLVER = dns.address;
  process.env.DNS_TIMEOUT_MS = '500';
  Object.assign(process.env, SHORT_SCHEDULE);
});
afterAll(async () => {
  for (const name of ['DNS_RESOLVER', 'DNS_TIMEOUT_MS', ...Object.keys(SHORT_SCHEDULE)]) delete process.env[name];
  await platform?.stop();
  await dns?.close();
});

/*
 * These change what the whole platform reads (the validation deadline, the queue's URL, the interval between looks), so
 * they run first and alone; the suites after them are independent domains and run concurrently, each waiting out ACM's validation at once.
 */
describe('a certificate that never validates', () => {
  it('fails with VALIDATION_TIMED_OUT, is retried after growing delays, and after the last attempt its message is in the dead-letter queue', async () => {
    // Deadline 0 s: moto's certificate is PENDING_VALIDATION for 3 s after its request, so each attempt's first look fails it.
    process.env.SSL_VALIDATION_TIMEOUT_SECONDS = '0';
    const verified = await verifiedDomain();
    const retryDelays = new Map<string, number>();
    const track = (d: any) => {
      if (d.ssl_status === 'failed' && d.next_retry_at)
        retryDelays.set(d.next_retry_at, Date.parse(d.next_retry_at) - Date.parse(d.updated_at));
    };

    const failed = await waitFor(verified.id, (d) => d.ssl_status === 'failed', 20_000, track);
    expect(failed).toMatchObject({ ssl_attempts: 1, ssl_error_code: 'VALIDATION_TIMED_OUT', ssl_issued_at: null, pull_zone_id: null });
    expect(failed.ssl_error).toBe(`${SSL_ERROR_CODES.VALIDATION_TIMED_OUT} (not validated within 0 s)`);
    expect(failed.next_retry_at).toEqual(expect.any(String));
    expect(failed.debug_url).toBe(verified.debug_url);
    expect(Object.keys(failed).sort()).toEqual([...SPEC_FIELDS, 'debug_url', 'next_retry_at'].sort());

    // Three attempts (SSL_MAX_ATTEMPTS): the last failure schedules nothing and sends the message to the dead-letter queue.
    const last = await waitFor(verified.id, (d) => d.ssl_status === 'failed' && d.ssl_attempts === 3, 30_000, track);
    expect(last).toMatchObject({ ssl_error_code: 'VALIDATION_TIMED_OUT', ssl_issued_at: null, pull_zone_id: null });
    expect(last).not.toHaveProperty('next_retry_at');
    expect(last.debug_url).toBe(verified.debug_url);
    expect(last.ssl_provisioning_started_at).toBe(failed.ssl_provisioning_started_at);
    // 1 s, then 2 s (the delay doubles and the test's cap is 2 s).
    expect([...retryDelays.values()].map((ms) => Math.round(ms / 1000))).toEqual([1, 2]);

    const dlq = await deadLetterUrl();
    let dead: any;
    for (let i = 0; i < 50 && !dead; i++) {
      const reply = await sqs().send(new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      for (const message of reply.Messages ?? []) {
        const body = JSON.parse(message.Body!);
        if (body.domain_id === verified.id) {
          dead = body;
          await sqs().send(new DeleteMessageCommand({ QueueUrl: dlq, ReceiptHandle: message.ReceiptHandle! }));
        }
      }
      if (!dead) await new Promise((r) => setTimeout(r, 100));
    }
    expect(dead).toMatchObject({
      kind: 'ssl_attempt',
      domain_id: verified.id,
      chain: 3,
      seen_attempts: 3,
      ssl_error_code: 'VALIDATION_TIMED_OUT',
    });
    // No retry is left queued: once the SSL-retries queue holds nothing (visible, in flight or delayed; this test runs
    // alone), the domain stays as it is.
    await until(async () => {
      const { Attributes: counts } = await sqs().send(
        new GetQueueAttributesCommand({
          QueueUrl: config.queueUrl('sslRetries'),
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      return Object.values(counts ?? {}).every((n) => n === '0');
    }, 'the SSL-retries queue to empty');
    expect((await read(verified.id)).body.data).toEqual(last);

    // retry-ssl: a new attempt claimed at once (made by the worker), the spec's subset of fields; with a deadline the certificate meets, it is issued.
    process.env.SSL_VALIDATION_TIMEOUT_SECONDS = '60';
    const retried = await retrySsl(verified.id);
    expect(retried.status).toBe(200);
    expect(Object.keys(retried.body.data).sort()).toEqual([...RETRY_SSL_FIELDS].sort());
    expect(retried.body.data).toMatchObject({
      id: verified.id,
      ssl_status: 'provisioning',
      ssl_attempts: 4,
      ssl_error: null,
      ssl_error_code: null,
    });
    expect(retried.body.data.ssl_provisioning_started_at).toBe(failed.ssl_provisioning_started_at);
    expect(retried.body.data.ssl_last_attempt_at > last.ssl_last_attempt_at).toBe(true);
    const issued = await waitFor(verified.id, (d) => d.ssl_status === 'issued');
    expect(issued).toMatchObject({ ssl_attempts: 4, ssl_error_code: null, supports_geo_filtering: true });
    expect(issued).not.toHaveProperty('debug_url');
  }, 90_000);
});

describe('POST /api/v1/domains/{id}/retry-ssl: the queue refusing, and racing attempts', () => {
  it('when the queue refuses the attempt: 500, and the attempt it claimed ends failed (PROVISIONING_INTERRUPTED, no retry queued), so retry-ssl may start again', async () => {
    const d = await verifiedQuietly();
    const envVar = queueDefinitions.sslRetries.envVar;
    const saved = platform.env[envVar]!;
    // A queue that does not exist: SQS refuses the send (QueueDoesNotExist), as it would refuse one it cannot take.
    platform.env[envVar] = `${saved}-missing`;
    let refused;
    try {
      refused = await retrySsl(d.id);
    } finally {
      platform.env[envVar] = saved;
    }
    expectError(refused, 500, 'INTERNAL_ERROR');
    const after = (await read(d.id)).body.data;
    expect(after).toMatchObject({
      ssl_status: 'failed',
      ssl_attempts: 1,
      ssl_error_code: 'PROVISIONING_INTERRUPTED',
      ssl_error: SSL_ERROR_CODES.PROVISIONING_INTERRUPTED,
      ssl_issued_at: null,
    });
    expect(after).not.toHaveProperty('next_retry_at');

    const again = await retrySsl(d.id);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ id: d.id, ssl_status: 'provisioning', ssl_attempts: 2, ssl_error: null, ssl_error_code: null });
    expect((await waitFor(d.id, (x) => x.ssl_status === 'issued')).ssl_attempts).toBe(2);
  }, 30_000);

  it('racing attempts: of claims from the same state exactly one runs, a look delivered twice runs once; racing retry-ssl calls give the domain one distribution', async () => {
    const d = await verifiedQuietly();
    const item = await stored(d.id);
    // The worker's own look comes a minute on, so the two deliveries below are the only ones (this test runs alone).
    process.env.SSL_CHECK_INTERVAL_SECONDS = '60';
    const outcomes = (await Promise.all([attemptTls(item), attemptTls(item), attemptTls(item)])).map((r) => r.outcome);
    expect(outcomes.filter((o) => o !== 'stale')).toEqual(['provisioning']);
    expect((await read(d.id)).body.data.ssl_attempts).toBe(1);
    // One look at the pending certificate, delivered twice by SQS: it runs once.
    const look = { kind: 'ssl_check' as const, domain_id: d.id, seen_attempts: 1, chain: 1, check: 1 };
    const looks = await Promise.all([handleSslMessage(look), handleSslMessage(look)]);
    process.env.SSL_CHECK_INTERVAL_SECONDS = SHORT_SCHEDULE.SSL_CHECK_INTERVAL_SECONDS;
    // The one that runs finds the certificate still validating, or (on a busy machine, past moto's 3 s) issued.
    expect(looks.filter((o) => o === 'stale')).toHaveLength(1);
    expect(['provisioning', 'issued']).toContain(looks.find((o) => o !== 'stale'));

    const replies = await Promise.all([
      retrySsl(d.id),
      retrySsl(d.id, m.admin.token),
      retrySsl(d.id, m.owner.token),
      retrySsl(d.id, m.apiKey.token),
    ]);
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect(Object.keys(r.body.data).sort()).toEqual([...RETRY_SSL_FIELDS].sort());
    }
    const issued = await waitFor(d.id, (x) => x.ssl_status === 'issued');
    expect(issued.ssl_attempts).toBeGreaterThanOrEqual(2);
    expect(issued.ssl_attempts).toBeLessThanOrEqual(5);
    expect(await distributionsFor(d.domain)).toEqual([(await stored(d.id)).distribution_id]);
    // Every distribution has its own pull zone number.
    const other = await waitFor((await verifiedDomain()).id, (x) => x.ssl_status === 'issued');
    expect(other.pull_zone_id).not.toBe(issued.pull_zone_id);
  }, 60_000);
});

describe.concurrent('provisioning after verification', () => {
  it('byo_dns: pending when verified, provisioning while ACM validates, then issued on its own distribution; debug_url and next_retry_at follow the rules; removal tears the distribution and certificate down', async () => {
    const verified = await verifiedDomain();
    expect(verified).toMatchObject({
      ssl_status: 'pending',
      ssl_attempts: 0,
      ssl_provisioning_started_at: null,
      pull_zone_id: null,
      supports_geo_filtering: false,
    });
    expect(verified.debug_url).toBe(`https://www.ssllabs.com/ssltest/analyze.html?d=${verified.domain}&hideResults=on`);
    expect(verified).not.toHaveProperty('next_retry_at');

    const provisioning = await waitFor(verified.id, (d) => d.ssl_status !== 'pending');
    expect(provisioning).toMatchObject({
      ssl_status: 'provisioning',
      ssl_attempts: 1,
      ssl_error: null,
      ssl_error_code: null,
      ssl_issued_at: null,
      pull_zone_id: null,
    });
    expect(provisioning.ssl_provisioning_started_at).toEqual(expect.any(String));
    expect(provisioning.ssl_last_attempt_at).toBe(provisioning.ssl_provisioning_started_at);
    expect(provisioning.debug_url).toBe(verified.debug_url);
    expect(provisioning).not.toHaveProperty('next_retry_at');
    expect(Object.keys(provisioning).sort()).toEqual([...SPEC_FIELDS, 'debug_url'].sort());
    // byo_dns: the certificate's validation CNAME joins dns_records, for the customer to create.
    const withValidation = await waitFor(verified.id, (d) => d.dns_records.length === 3 || d.ssl_status === 'issued');
    const arn = (await stored(verified.id)).certificate_arn as string;
    const rr = (await acm().send(new DescribeCertificateCommand({ CertificateArn: arn }))).Certificate!.DomainValidationOptions![0]!
      .ResourceRecord!;
    expect(withValidation.dns_records).toEqual([
      ...verified.dns_records,
      { name: rr.Name!.replace(/\.$/, ''), type: 'CNAME', value: rr.Value!.replace(/\.$/, ''), note: expect.any(String) },
    ]);

    const issued = await waitFor(verified.id, (d) => d.ssl_status !== 'provisioning');
    expect(issued).toMatchObject({
      ssl_status: 'issued',
      ssl_attempts: 1,
      ssl_error: null,
      ssl_error_code: null,
      supports_geo_filtering: true,
    });
    expect(issued.ssl_provisioning_started_at).toBe(provisioning.ssl_provisioning_started_at);
    expect(issued.ssl_issued_at > issued.ssl_provisioning_started_at).toBe(true);
    expect(Number.isInteger(issued.pull_zone_id)).toBe(true);
    // Issued: SSL is resolved, so neither the diagnostic link nor a retry time, and the two internal fields stay inside.
    expect(Object.keys(issued).sort()).toEqual([...SPEC_FIELDS].sort());
    // The validation record stays: ACM renews the certificate through it.
    expect(issued.dns_records).toEqual(withValidation.dns_records);

    const item = await stored(verified.id);
    const distribution = (await cloudfront().send(new GetDistributionCommand({ Id: item.distribution_id as string }))).Distribution!;
    expect(distribution.DistributionConfig!.Aliases!.Items).toEqual([verified.domain]);
    expect(distribution.DistributionConfig!.ViewerCertificate!.ACMCertificateArn).toBe(item.certificate_arn);
    expect(distribution.DistributionConfig!.Origins!.Items![0]!.DomainName).toBe(`${project.subdomain}.${config.siteDomain()}`);
    // The sites distribution is told which hostname was asked for, and this one caches nothing itself:
    // path, query and viewer headers pass on (AWS's managed CachingDisabled and AllViewerExceptHostHeader).
    expect(distribution.DistributionConfig!.Origins!.Items![0]!.CustomHeaders).toEqual({
      Quantity: 1,
      Items: [{ HeaderName: 'x-slipway-custom-host', HeaderValue: verified.domain }],
    });
    expect(distribution.DistributionConfig!.DefaultCacheBehavior).toMatchObject({
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
    });
    // Every method passes on (a `_redirects` rule answers every method); only GET and HEAD could be cached.
    expect(distribution.DistributionConfig!.DefaultCacheBehavior!.AllowedMethods).toMatchObject({
      Items: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachedMethods: { Items: ['GET', 'HEAD'] },
    });
    const certificate = (await acm().send(new DescribeCertificateCommand({ CertificateArn: item.certificate_arn as string }))).Certificate!;
    expect(certificate).toMatchObject({ DomainName: verified.domain, Status: 'ISSUED' });

    const refused = await retrySsl(verified.id);
    expectError(refused, 400, 'SSL_ALREADY_ISSUED');
    expect(refused.body.error).toBe(errorCatalogue.SSL_ALREADY_ISSUED.message);
    expect((await read(verified.id)).body.data).toEqual(issued);

    // Removing the domain queues the teardown: the distribution is disabled, then deleted, then the certificate.
    expect((await platform.api('DELETE', `/api/v1/domains/${verified.id}`, { token: m.admin.token })).status).toBe(200);
    const deadline = Date.now() + scaled(15_000);
    let after = await stored(verified.id);
    while ((after.distribution_id || after.certificate_arn) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = await stored(verified.id);
    }
    expect(after).toMatchObject({ distribution_id: null, certificate_arn: null, pull_zone_id: issued.pull_zone_id });
    await expect(cloudfront().send(new GetDistributionCommand({ Id: item.distribution_id as string }))).rejects.toMatchObject({
      name: 'NoSuchDistribution',
    });
    await expect(acm().send(new DescribeCertificateCommand({ CertificateArn: item.certificate_arn as string }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    expect(await distributionsFor(verified.domain)).toEqual([]);
  }, 60_000);

  it('managed_dns: the validation CNAME goes into the managed zone, and once issued the apex points at the distribution', async () => {
    const host = `${label()}.com`;
    const d = (await add({ domain: host, connection_mode: 'managed_dns' })).body.data;
    dns.set(host, 'NS', [d.cdn_dns_ns1, d.cdn_dns_ns2]);
    expect((await verify(d.id)).body.data).toMatchObject({ status: 'verified', ssl_status: 'pending' });
    const zoneId = (await stored(d.id)).hosted_zone_id as string;
    const records = async () =>
      (await route53().send(new ListResourceRecordSetsCommand({ HostedZoneId: zoneId }))).ResourceRecordSets ?? [];

    await waitFor(d.id, (x) => x.ssl_status === 'provisioning');
    // The attempt writes the certificate's ARN right after requesting it.
    let item = await stored(d.id);
    for (let i = 0; i < 50 && !item.certificate_arn; i++) {
      await new Promise((r) => setTimeout(r, 100));
      item = await stored(d.id);
    }
    const validation = (await acm().send(new DescribeCertificateCommand({ CertificateArn: item.certificate_arn as string }))).Certificate!
      .DomainValidationOptions![0]!.ResourceRecord!;
    const deadline = Date.now() + scaled(5000);
    while (!(await records()).some((r) => r.Type === 'CNAME') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await records()).find((r) => r.Type === 'CNAME')).toMatchObject({
      Name: validation.Name,
      ResourceRecords: [{ Value: validation.Value }],
    });

    const issued = await waitFor(d.id, (x) => x.ssl_status === 'issued');
    const distribution = (await cloudfront().send(new GetDistributionCommand({ Id: (await stored(d.id)).distribution_id as string })))
      .Distribution!;
    const alias = (await records()).find((r) => r.Type === 'A' && r.Name!.replace(/\.$/, '') === host);
    expect(alias?.AliasTarget).toMatchObject({
      HostedZoneId: 'Z2FDTNDATAQYW2',
      DNSName: expect.stringContaining(distribution.DomainName!),
    });
    expect(issued.supports_geo_filtering).toBe(true);

    // Removing the domain empties the zone of what TLS wrote, then deletes it.
    const removed = await platform.api('DELETE', `/api/v1/domains/${d.id}`, { token: m.admin.token });
    expect(removed.status).toBe(200);
    await expect(route53().send(new GetHostedZoneCommand({ Id: zoneId }))).rejects.toMatchObject({ name: 'NoSuchHostedZone' });
  }, 40_000);
});

describe.concurrent('a domain that already holds a geo policy', () => {
  it('gets it on the distribution made for it, and the distribution is tagged with its domain', async () => {
    const d = await verifiedQuietly();
    // A policy saved for an earlier distribution of this domain (and recorded as applied there), none now.
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.domain(d.id),
        UpdateExpression: 'SET geo_mode = :mode, geo_countries = :countries, geo_revision = :rev, geo_applied_revision = :rev',
        ExpressionAttributeValues: { ':mode': 'blocklist', ':countries': ['KP', 'RU'], ':rev': 3 },
      }),
    );
    await attemptTls(await stored(d.id));
    const issued = await waitFor(d.id, (x) => x.ssl_status === 'issued');
    expect(issued).toMatchObject({ geo_mode: 'blocklist', geo_countries: ['KP', 'RU'], supports_geo_filtering: true });
    const item = await stored(d.id);
    expect(await distributionGeoRestriction(item.distribution_id as string)).toEqual({
      RestrictionType: 'blacklist',
      Quantity: 2,
      Items: ['KP', 'RU'],
    });
    expect(item.geo_applied_revision).toBe(3);
    const arn = (await cloudfront().send(new GetDistributionCommand({ Id: item.distribution_id as string }))).Distribution!.ARN!;
    const tags = (await cloudfront().send(new ListTagsForResourceCommand({ Resource: arn }))).Tags!.Items;
    expect(tags).toEqual(
      expect.arrayContaining([
        { Key: 'slipway:domain-id', Value: d.id },
        { Key: 'slipway:project-id', Value: project.id },
      ]),
    );
  }, 40_000);

  it('a domain without a policy gets an unrestricted distribution, and nothing recorded as applied', async () => {
    const d = await verifiedQuietly();
    await attemptTls(await stored(d.id));
    await waitFor(d.id, (x) => x.ssl_status === 'issued');
    const item = await stored(d.id);
    expect(await distributionGeoRestriction(item.distribution_id as string)).toMatchObject({ RestrictionType: 'none', Quantity: 0 });
    expect(item.geo_applied_revision).toBeUndefined();
  }, 40_000);
});

describe.concurrent('a hostname ACM refuses', () => {
  it('a hostname over 64 characters (ACM puts the first name in the certificate subject, at most 64): CERTIFICATE_REQUEST_FAILED, retried', async () => {
    const host = `${'a'.repeat(40)}.${'b'.repeat(20)}.${label()}.com`;
    expect(host.length).toBeGreaterThan(64);
    const d = (await add({ domain: host })).body.data;
    dns.set(`_slipway-challenge.${host}`, 'TXT', [d.verification_token]);
    expect((await verify(d.id)).body.data.status).toBe('verified');
    const failed = await waitFor(d.id, (x) => x.ssl_status === 'failed');
    expect(failed).toMatchObject({ ssl_error_code: 'CERTIFICATE_REQUEST_FAILED', ssl_attempts: 1, pull_zone_id: null });
    expect(failed.ssl_error.startsWith(SSL_ERROR_CODES.CERTIFICATE_REQUEST_FAILED)).toBe(true);
    expect(failed.next_retry_at).toEqual(expect.any(String));
    expect(failed.debug_url).toContain(host);
  }, 30_000);
});

describe.concurrent('POST /api/v1/domains/{id}/retry-ssl', () => {
  it('400 for a domain not verified (pending or failed verification), and changes nothing', async () => {
    const pending = (await add({ domain: `p.${label()}.com` })).body.data;
    const refused = await retrySsl(pending.id);
    expectError(refused, 400, 'DOMAIN_NOT_VERIFIED');
    expect(refused.body.error).toBe(errorCatalogue.DOMAIN_NOT_VERIFIED.message);
    expect((await read(pending.id)).body.data).toEqual(pending);

    const failedVerification = (await verify(pending.id)).body.data;
    expect(failedVerification.status).toBe('failed');
    expectError(await retrySsl(pending.id), 400, 'DOMAIN_NOT_VERIFIED');
    expect((await read(pending.id)).body.data).toEqual(failedVerification);

    expectError(await retrySsl('00000000-0000-4000-8000-000000000000'), 404, 'DOMAIN_NOT_FOUND');
    expectError(await retrySsl('not-a-uuid'), 404, 'DOMAIN_NOT_FOUND');
  });

  it('authorization: owner, admin, member and the team API key may retry; other teams get 404; no credential 401', async () => {
    const d = await verifiedQuietly();
    for (const token of [m.owner.token, m.admin.token, m.member.token, m.apiKey.token]) {
      const reply = await retrySsl(d.id, token);
      expect(reply.status).toBe(200);
      expect(reply.body.data.id).toBe(d.id);
    }
    const before = (await read(d.id)).body.data;
    expect(before.ssl_attempts).toBe(4);
    for (const token of [m.outsider.token, otherTeamKey]) expectError(await retrySsl(d.id, token), 404, 'DOMAIN_NOT_FOUND');
    for (const token of [null, 'not-a-token']) expectError(await retrySsl(d.id, token), 401, 'UNAUTHENTICATED');
    // Nothing a refused caller sent started an attempt.
    expect((await read(d.id)).body.data.ssl_attempts).toBe(4);
  }, 30_000);
});
