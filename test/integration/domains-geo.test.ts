import { randomBytes } from 'node:crypto';
import { GetDistributionConfigCommand } from '@aws-sdk/client-cloudfront';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { cloudfront } from '../../lib/aws/cloudfront.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createApiKey } from '../../lib/identity/credential-records.ts';
import { queueDriver, type QueueDriver } from '../../lib/local/queue-driver.ts';
import { workers } from '../../lib/workers.ts';
import { handler as geoFiltersWorker } from '../../handlers/workers/geo-filters.ts';
import { attachDistribution, createTestDistribution, distributionGeoRestriction } from '../support/cdn.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, uniqueName, uniqueSite } from '../support/uploads.ts';

/**
 * Custom domains, item 4 of the feature: geo rules (PATCH
 * /api/v1/domains/{id}/geo-filter) set as the geo restriction of the domain's
 * own CloudFront distribution in moto, read back with GetDistributionConfig.
 * Until the TLS part lands, test/support/cdn.ts makes the distribution and
 * records it on the domain, standing in for the TLS worker.
 */
let platform: TestPlatform;
let geoQueue: QueueDriver;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let project: { id: string; subdomain: string };
let otherTeamKey: string;

const label = () => `t${randomBytes(5).toString('hex')}`;
const stored = async (id: string) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.domain(id), ConsistentRead: true }))).Item!;

const add = (body: unknown, token = m.admin.token) => platform.api('POST', `/api/v1/projects/${project.id}/domains`, { token, body });
const read = (id: string, token = m.member.token) => platform.api('GET', `/api/v1/domains/${id}`, { token });
const geo = (id: string, body: unknown, token: string | null = m.admin.token) =>
  platform.api('PATCH', `/api/v1/domains/${id}/geo-filter`, { token: token ?? undefined, body });

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
  'debug_url',
  'geo_mode',
  'geo_countries',
  'supports_geo_filtering',
  'pull_zone_id',
  'cdn_dns_ns1',
  'cdn_dns_ns2',
  'cdn_dns_zone_id',
];

/** A domain of the project with its own distribution in moto (the TLS worker's part, played by test/support/cdn.ts). */
async function domainOnDedicatedZone() {
  const d = (await add({ domain: `www.${label()}.com` })).body.data;
  const distributionId = await createTestDistribution(d.domain, `${project.subdomain}.${config.siteDomain()}`);
  const pullZoneId = await attachDistribution(d.id, distributionId);
  return { domain: (await read(d.id)).body.data, distributionId, pullZoneId };
}

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  // Only the geo-filters worker, played by a queue driver the tests can pause.
  platform = await startTestPlatform({
    drivers: [() => (geoQueue = queueDriver({ rows: workers.filter((row) => row.name === 'geo-filters') }))],
  });
  m = await makeTeamWithRoles();
  otherTeamKey = await createApiKey(m.otherTeam.id);
  const subdomain = `geo-${randomBytes(4).toString('hex')}`;
  const done = await deploy(platform, m.owner.token, uniqueSite(), { name: uniqueName('Geo'), subdomain });
  project = { id: done.begin.project_id as string, subdomain };
}, 60_000);
afterAll(async () => {
  await platform?.stop();
});

describe('a domain without its own distribution', () => {
  it('does not support geo filtering: the PATCH is refused with 409 DOMAIN_NOT_ON_DEDICATED_ZONE and nothing changes', async () => {
    const d = (await add({ domain: `www.${label()}.com` })).body.data;
    expect(d).toMatchObject({ supports_geo_filtering: false, pull_zone_id: null, geo_mode: 'off', geo_countries: [] });
    const reply = await geo(d.id, { geo_mode: 'blocklist', geo_countries: ['RU'] });
    expectError(reply, 409, 'DOMAIN_NOT_ON_DEDICATED_ZONE');
    expect(reply.body.error).toBe(
      'Geo rules need the domain on its own pull zone, which it gets once verified and its certificate is set up.',
    );
    expectError(await geo(d.id, { geo_mode: 'off' }), 409, 'DOMAIN_NOT_ON_DEDICATED_ZONE');
    expect((await read(d.id)).body.data).toEqual(d);
  });
});

describe('setting the policy on the distribution', () => {
  it('allowlist, blocklist, off: every field returned, countries upper-cased and deduplicated, the restriction really set on the distribution', async () => {
    const { domain: d, distributionId, pullZoneId } = await domainOnDedicatedZone();
    expect(d).toMatchObject({ supports_geo_filtering: true, pull_zone_id: pullZoneId, geo_mode: 'off', geo_countries: [] });
    const before = (await cloudfront().send(new GetDistributionConfigCommand({ Id: distributionId }))).DistributionConfig!;
    expect(before.Restrictions!.GeoRestriction!.RestrictionType).toBe('none');

    const allow = await geo(d.id, { geo_mode: 'allowlist', geo_countries: ['us', 'DE', 'de', 'Fr'] });
    expect(allow.status).toBe(200);
    expect(Object.keys(allow.body.data).sort()).toEqual([...SPEC_FIELDS].sort());
    expect(allow.body.data).toEqual({ ...d, geo_mode: 'allowlist', geo_countries: ['DE', 'FR', 'US'], updated_at: expect.any(String) });
    expect(allow.body.data.updated_at > d.updated_at).toBe(true);
    expect(await distributionGeoRestriction(distributionId)).toEqual({
      RestrictionType: 'whitelist',
      Quantity: 3,
      Items: ['DE', 'FR', 'US'],
    });
    expect((await read(d.id)).body.data).toEqual(allow.body.data);
    // Only the restriction changed: the alias and origin the TLS part set are as they were.
    const after = (await cloudfront().send(new GetDistributionConfigCommand({ Id: distributionId }))).DistributionConfig!;
    expect({
      aliases: after.Aliases,
      origins: after.Origins!.Items!.map((o) => o.DomainName),
      enabled: after.Enabled,
      comment: after.Comment,
    }).toEqual({
      aliases: before.Aliases,
      origins: before.Origins!.Items!.map((o) => o.DomainName),
      enabled: before.Enabled,
      comment: before.Comment,
    });

    const block = await geo(d.id, { geo_mode: 'blocklist', geo_countries: ['kp'] });
    expect(block.status).toBe(200);
    expect(block.body.data).toMatchObject({ geo_mode: 'blocklist', geo_countries: ['KP'], supports_geo_filtering: true });
    expect(await distributionGeoRestriction(distributionId)).toEqual({ RestrictionType: 'blacklist', Quantity: 1, Items: ['KP'] });

    const off = await geo(d.id, { geo_mode: 'off' });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ geo_mode: 'off', geo_countries: [] });
    expect(await distributionGeoRestriction(distributionId)).toMatchObject({ RestrictionType: 'none', Quantity: 0 });
    const item = await stored(d.id);
    expect(item.geo_applied_revision).toBe(item.geo_revision);
    expect(item.geo_applied_at).toEqual(expect.any(String));
  });

  it('refuses bad modes and country codes with a stable code; nothing changes, on the domain or the distribution', async () => {
    const { domain, distributionId } = await domainOnDedicatedZone();
    const d = (await geo(domain.id, { geo_mode: 'blocklist', geo_countries: ['CN'] })).body.data;
    const cases: [unknown, number, string][] = [
      [{ geo_mode: 'allowlist', geo_countries: ['DE', 'ZZ'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'blocklist', geo_countries: ['DEU'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'blocklist', geo_countries: ['276'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'blocklist', geo_countries: ['UK'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'blocklist', geo_countries: ['EU'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'blocklist', geo_countries: ['XK'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'blocklist', geo_countries: [' DE'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'blocklist', geo_countries: [''] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'off', geo_countries: ['Germany'] }, 400, 'GEO_COUNTRY_INVALID'],
      [{ geo_mode: 'allowlist' }, 400, 'GEO_COUNTRIES_REQUIRED'],
      [{ geo_mode: 'blocklist', geo_countries: [] }, 400, 'GEO_COUNTRIES_REQUIRED'],
      [{ geo_mode: 'whitelist', geo_countries: ['DE'] }, 400, 'VALIDATION_FAILED'],
      [{ geo_mode: 'ALLOWLIST', geo_countries: ['DE'] }, 400, 'VALIDATION_FAILED'],
      [{ geo_countries: ['DE'] }, 400, 'VALIDATION_FAILED'],
      [{ geo_mode: 'allowlist', geo_countries: 'DE' }, 400, 'VALIDATION_FAILED'],
      [{ geo_mode: 'allowlist', geo_countries: [49] }, 400, 'VALIDATION_FAILED'],
      [{ geo_mode: 'allowlist', geo_countries: Array(501).fill('DE') }, 400, 'VALIDATION_FAILED'],
      [[], 400, 'VALIDATION_FAILED'],
    ];
    for (const [body, status, code] of cases) expectError(await geo(d.id, body), status, code);
    const invalid = await geo(d.id, { geo_mode: 'allowlist', geo_countries: ['DE', 'zz', 'DEU', 'zz'] });
    expect(invalid.body.details).toEqual({ invalid: ['zz', 'DEU'] });
    expect(invalid.body.error).toBe(
      'geo_countries must be ISO 3166-1 alpha-2 country codes, like DE or US; details.invalid lists the others.',
    );
    const required = await geo(d.id, { geo_mode: 'allowlist', geo_countries: [] });
    expect(required.body.error).toBe('geo_countries must name at least one country unless geo_mode is off.');
    const mode = await geo(d.id, { geo_mode: 'nowhere' });
    expect(mode.body.details.fields.map((f: { field: string }) => f.field)).toEqual(['geo_mode']);
    expectError(
      await platform.api('PATCH', `/api/v1/domains/${d.id}/geo-filter`, {
        token: m.admin.token,
        rawBody: '{"geo_mode":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'INVALID_JSON',
    );
    expect((await read(d.id)).body.data).toEqual(d);
    expect(await distributionGeoRestriction(distributionId)).toEqual({ RestrictionType: 'blacklist', Quantity: 1, Items: ['CN'] });
  });

  it('racing PATCHes with different policies: the distribution ends on the policy the domain holds, recorded as applied', async () => {
    const { domain: d, distributionId } = await domainOnDedicatedZone();
    const policies = [
      { geo_mode: 'allowlist', geo_countries: ['DE'] },
      { geo_mode: 'blocklist', geo_countries: ['FR', 'IT'] },
      { geo_mode: 'allowlist', geo_countries: ['JP', 'KR', 'US'] },
      { geo_mode: 'off' },
      { geo_mode: 'blocklist', geo_countries: ['BR'] },
    ];
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(policies.map((p) => geo(d.id, p)));
      for (const reply of replies) expect(reply.status, `${reply.status} ${reply.body.code ?? ''}`).toBe(200);
      const now = (await read(d.id)).body.data;
      const restriction = await distributionGeoRestriction(distributionId);
      const expected =
        now.geo_mode === 'off'
          ? { RestrictionType: 'none', Quantity: 0 }
          : {
              RestrictionType: now.geo_mode === 'allowlist' ? 'whitelist' : 'blacklist',
              Quantity: now.geo_countries.length,
              Items: now.geo_countries,
            };
      expect(restriction).toMatchObject(expected);
      const item = await stored(d.id);
      expect(item.geo_revision).toBe(policies.length * (round + 1));
      expect(item.geo_applied_revision).toBe(item.geo_revision);
    }
  }, 60_000);
});

describe('an older policy reaching CloudFront after a newer one', () => {
  it('is put right: the request whose write landed late sees the newer save and applies it again', async () => {
    const { domain: d, distributionId } = await domainOnDedicatedZone();
    // Holds the first UpdateDistribution of this distribution (a real request, sent late) until the second PATCH is done:
    // the first PATCH's older policy then reaches CloudFront after the second's newer one.
    const realFetch = globalThis.fetch;
    let releaseHeld!: () => void;
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    let firstHeld!: () => void;
    const firstReachedCloudFront = new Promise<void>((resolve) => (firstHeld = resolve));
    let puts = 0;
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const request = input instanceof Request ? input : null;
      const method = request?.method ?? init?.method ?? 'GET';
      const url = request?.url ?? String(input);
      if (method === 'PUT' && url.includes(`/distribution/${distributionId}/config`) && puts++ === 0) {
        firstHeld();
        await held;
      }
      return realFetch(input, init);
    }) as typeof fetch;
    try {
      const older = geo(d.id, { geo_mode: 'allowlist', geo_countries: ['DE'] });
      await firstReachedCloudFront;
      const newer = await geo(d.id, { geo_mode: 'blocklist', geo_countries: ['FR'] });
      expect(newer.status).toBe(200);
      expect(await distributionGeoRestriction(distributionId)).toEqual({ RestrictionType: 'blacklist', Quantity: 1, Items: ['FR'] });
      releaseHeld();
      const late = await older;
      expect(late.status).toBe(200);
      // The late request answers with what the domain holds now, the newer policy, and put it back on the distribution.
      expect(late.body.data).toMatchObject({ geo_mode: 'blocklist', geo_countries: ['FR'] });
      expect(await distributionGeoRestriction(distributionId)).toEqual({ RestrictionType: 'blacklist', Quantity: 1, Items: ['FR'] });
      const item = await stored(d.id);
      expect({ revision: item.geo_revision, applied: item.geo_applied_revision }).toEqual({ revision: 2, applied: 2 });
      expect(puts).toBe(3);
    } finally {
      releaseHeld();
      globalThis.fetch = realFetch;
    }
  }, 60_000);
});

describe('when CloudFront does not take the policy', () => {
  it('saves it, answers 202 GEO_POLICY_NOT_APPLIED with the domain, and the geo-filters worker applies it later', async () => {
    const d = (await add({ domain: `www.${label()}.com` })).body.data;
    // A distribution id moto does not hold: CloudFront answers NoSuchDistribution, a real failure of the update.
    const missing = `E${randomBytes(6).toString('hex').toUpperCase()}`;
    const pullZoneId = await attachDistribution(d.id, missing);
    geoQueue.pause();
    try {
      const reply = await geo(d.id, { geo_mode: 'blocklist', geo_countries: ['ru', 'BY'] });
      expectError(reply, 202, 'GEO_POLICY_NOT_APPLIED');
      expect(reply.body.error).toBe(
        'The geo policy is saved but the CDN did not take it yet; it is applied automatically when the CDN answers.',
      );
      const saved = reply.body.details.domain;
      expect(Object.keys(saved).sort()).toEqual([...SPEC_FIELDS].sort());
      expect(saved).toMatchObject({
        id: d.id,
        geo_mode: 'blocklist',
        geo_countries: ['BY', 'RU'],
        supports_geo_filtering: true,
        pull_zone_id: pullZoneId,
      });
      expect((await read(d.id)).body.data).toEqual(saved);
      const pending = await stored(d.id);
      expect(pending.geo_revision).toBe(1);
      expect(pending.geo_applied_revision ?? null).toBeNull();
      expect(pending.geo_applied_at ?? null).toBeNull();

      // The distribution becomes reachable (the TLS worker's part, played here: it records the domain's real distribution).
      const distributionId = await createTestDistribution(d.domain);
      await attachDistribution(d.id, distributionId);
      expect((await distributionGeoRestriction(distributionId)).RestrictionType).toBe('none');
      geoQueue.resume();
      const applied = await waitFor(
        () => stored(d.id),
        (item) => item.geo_applied_revision === 1,
      );
      expect(applied.geo_applied_at).toEqual(expect.any(String));
      expect(await distributionGeoRestriction(distributionId)).toEqual({ RestrictionType: 'blacklist', Quantity: 2, Items: ['BY', 'RU'] });
    } finally {
      geoQueue.resume();
    }
  }, 60_000);
});

describe('the geo-filters worker', () => {
  it('reports a message whose policy CloudFront still refuses as a batch item failure (SQS redelivers it), and drops what has nothing to apply', async () => {
    const record = (body: unknown, messageId = randomBytes(8).toString('hex')) =>
      ({
        messageId,
        receiptHandle: messageId,
        body: JSON.stringify(body),
        attributes: {},
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: '',
        awsRegion: '',
      }) as never;
    const d = (await add({ domain: `www.${label()}.com` })).body.data;
    await attachDistribution(d.id, `E${randomBytes(6).toString('hex').toUpperCase()}`);
    geoQueue.pause();
    try {
      expectError(await geo(d.id, { geo_mode: 'allowlist', geo_countries: ['NL'] }), 202, 'GEO_POLICY_NOT_APPLIED');
      const refused = record({ kind: 'geo_policy', domain_id: d.id }, 'still-refused');
      const removed = (await domainOnDedicatedZone()).domain;
      expect((await platform.api('DELETE', `/api/v1/domains/${removed.id}`, { token: m.admin.token })).status).toBe(200);
      const reply = await geoFiltersWorker({
        Records: [
          refused,
          record({ kind: 'geo_policy', domain_id: removed.id }),
          record({ kind: 'something else' }),
          record('not an object'),
        ],
      });
      expect(reply).toEqual({ batchItemFailures: [{ itemIdentifier: 'still-refused' }] });
      expect((await stored(d.id)).geo_applied_revision ?? null).toBeNull();
    } finally {
      geoQueue.resume();
    }
  }, 60_000);
});

describe('authorization', () => {
  it('owner, admin and the team API key set geo rules; a member gets 403; other teams 404; no credential 401; a removed domain 404', async () => {
    const { domain: d, distributionId } = await domainOnDedicatedZone();
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const body = { geo_mode: 'blocklist', geo_countries: ['CU'] };

    for (const token of [m.owner.token, m.admin.token, m.apiKey.token]) {
      const reply = await geo(d.id, body, token);
      expect(reply.status).toBe(200);
      expect(reply.body.data.geo_countries).toEqual(['CU']);
    }
    const set = (await read(d.id)).body.data;
    // A member may read the domain but not change its settings.
    expectError(await geo(d.id, { geo_mode: 'off' }, m.member.token), 403, 'FORBIDDEN');
    // Another team's session or API key cannot tell the domain exists.
    for (const token of [m.outsider.token, otherTeamKey]) {
      expectError(await geo(d.id, { geo_mode: 'off' }, token), 404, 'DOMAIN_NOT_FOUND');
      expectError(await geo(unknownId, { geo_mode: 'off' }, token), 404, 'DOMAIN_NOT_FOUND');
    }
    // A platform admin who is no member of the team is no exception.
    expectError(await geo(d.id, { geo_mode: 'off' }, m.platformAdmin.token), 404, 'DOMAIN_NOT_FOUND');
    for (const token of [null, 'not-a-token']) expectError(await geo(d.id, { geo_mode: 'off' }, token), 401, 'UNAUTHENTICATED');
    expectError(await geo(unknownId, body), 404, 'DOMAIN_NOT_FOUND');
    expectError(await geo('not-a-uuid', body), 404, 'DOMAIN_NOT_FOUND');
    // Nothing a refused caller sent changed the domain or the distribution.
    expect((await read(d.id)).body.data).toEqual(set);
    expect(await distributionGeoRestriction(distributionId)).toEqual({ RestrictionType: 'blacklist', Quantity: 1, Items: ['CU'] });

    expect((await platform.api('DELETE', `/api/v1/domains/${d.id}`, { token: m.admin.token })).status).toBe(200);
    expectError(await geo(d.id, { geo_mode: 'off' }), 404, 'DOMAIN_NOT_FOUND');
  }, 60_000);
});
