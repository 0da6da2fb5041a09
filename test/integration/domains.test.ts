import { randomBytes } from 'node:crypto';
import { GetHostedZoneCommand } from '@aws-sdk/client-route-53';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { route53 } from '../../lib/aws/route53.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createApiKey } from '../../lib/identity/credential-records.ts';
import { deleteProject } from '../../lib/lifecycle/project-deletion.ts';
import { startTestDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, uniqueName, uniqueSite } from '../support/uploads.ts';

/**
 * Custom domains, items 1 and 2 of the feature: connecting a hostname to a
 * project (byo_dns or managed_dns), listing, reading, verifying by real DNS
 * look-ups against a DNS server on loopback, removing; one project per
 * hostname platform-wide, racing adds included; and who may do what.
 */
let platform: TestPlatform;
let dns: TestDnsServer;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let project: { id: string; subdomain: string };
let otherTeamKey: string;

const label = () => `t${randomBytes(5).toString('hex')}`;
const item = async (key: { pk: string; sk: string }) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: key, ConsistentRead: true }))).Item;

const add = (body: unknown, token: string | null = m.admin.token, projectId = project.id) =>
  platform.api('POST', `/api/v1/projects/${projectId}/domains`, { token: token ?? undefined, body });
const verify = (id: string, token: string | null = m.member.token) =>
  platform.api('POST', `/api/v1/domains/${id}/verify`, { token: token ?? undefined });
const read = (id: string, token: string | null = m.member.token) =>
  platform.api('GET', `/api/v1/domains/${id}`, { token: token ?? undefined });
const list = (token: string | null = m.member.token, projectId = project.id) =>
  platform.api('GET', `/api/v1/projects/${projectId}/domains`, { token: token ?? undefined });
const remove = (id: string, token: string | null = m.admin.token) =>
  platform.api('DELETE', `/api/v1/domains/${id}`, { token: token ?? undefined });

async function newProject() {
  const subdomain = `dom-${randomBytes(4).toString('hex')}`;
  const done = await deploy(platform, m.owner.token, uniqueSite(), { name: uniqueName('Domains'), subdomain });
  return { id: done.begin.project_id as string, subdomain };
}

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

beforeAll(async () => {
  dns = await startTestDnsServer();
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  otherTeamKey = await createApiKey(m.otherTeam.id);
  project = await newProject();
  // No timeout of its own: the project's hookTimeout (scaled; 180 s in the synthesized mode, whose first hook waits for
  // the run's synthesis) applies.
});
beforeEach(() => {
  process.env.DNS_RESOLVER = dns.address;
  process.env.DNS_TIMEOUT_MS = '500';
});
afterAll(async () => {
  delete process.env.DNS_RESOLVER;
  delete process.env.DNS_TIMEOUT_MS;
  await platform?.stop();
  await dns?.close();
});

describe('adding a domain', () => {
  it('connects a subdomain with byo_dns: every spec field, a CNAME and the TXT token, SSL pending with its diagnostic link', async () => {
    const host = `www.${label()}.com`;
    const reply = await add({ domain: `  WWW.${host.slice(4).toUpperCase()}. ` });
    expect(reply.status).toBe(201);
    const d = reply.body.data;
    expect(Object.keys(d).sort()).toEqual([...SPEC_FIELDS].sort());
    expect(d).toMatchObject({
      team_id: m.team.id,
      project_id: project.id,
      domain: host,
      is_apex: false,
      connection_mode: 'byo_dns',
      status: 'pending_verification',
      verified_at: null,
      last_verification_attempt: null,
      ns_delegated_at: null,
      deleted_at: null,
      ssl_status: 'pending',
      ssl_attempts: 0,
      ssl_error: null,
      ssl_error_code: null,
      ssl_issued_at: null,
      ssl_last_attempt_at: null,
      ssl_provisioning_started_at: null,
      geo_mode: 'off',
      geo_countries: [],
      supports_geo_filtering: false,
      pull_zone_id: null,
      cdn_dns_ns1: null,
      cdn_dns_ns2: null,
      cdn_dns_zone_id: null,
    });
    expect(d.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(d.created_at).toBe(d.updated_at);
    expect(d.debug_url).toContain(encodeURIComponent(host));
    expect(d).not.toHaveProperty('next_retry_at');
    expect(d.dns_records).toEqual([
      { name: host, type: 'CNAME', value: `${project.subdomain}.${config.siteDomain()}`, note: expect.any(String) },
      { name: `_slipway-challenge.${host}`, type: 'TXT', value: d.verification_token, note: expect.any(String) },
    ]);
    expect(await item(keys.domainHost(host))).toMatchObject({ domain_id: d.id, project_id: project.id });
    expect((await read(d.id)).body.data).toEqual(d);
  });

  it('tells an apex from the public suffix list: example.co.uk is an apex and gets an ALIAS, a.b.example.com is not', async () => {
    const apex = `${label()}.co.uk`;
    const a = await add({ domain: apex });
    expect(a.status).toBe(201);
    expect(a.body.data.is_apex).toBe(true);
    expect(a.body.data.dns_records.map((r: { type: string }) => r.type)).toEqual(['ALIAS', 'TXT']);
    const deep = await add({ domain: `a.b.${label()}.com` });
    expect(deep.body.data.is_apex).toBe(false);
    expect(deep.body.data.dns_records[0].type).toBe('CNAME');
  });

  it('refuses bad input with a stable code and changes nothing', async () => {
    const before = (await list()).body.data.domains;
    const cases: [unknown, number, string][] = [
      [{ domain: 'co.uk' }, 400, 'DOMAIN_INVALID'],
      [{ domain: 'localhost' }, 400, 'DOMAIN_INVALID'],
      [{ domain: '203.0.113.7' }, 400, 'DOMAIN_INVALID'],
      [{ domain: 'bad_label.example.com' }, 400, 'DOMAIN_INVALID'],
      [{ domain: '-x.example.com' }, 400, 'DOMAIN_INVALID'],
      [{ domain: `${'a'.repeat(64)}.example.com` }, 400, 'DOMAIN_INVALID'],
      [{ domain: 'http://example.com/' }, 400, 'DOMAIN_INVALID'],
      [{ domain: `x.${label()}.notatld` }, 400, 'DOMAIN_INVALID'],
      [{ domain: '' }, 400, 'VALIDATION_FAILED'],
      [{ domain: 42 }, 400, 'VALIDATION_FAILED'],
      [{ domain: `${label()}.com`, connection_mode: 'carrier_pigeon' }, 400, 'VALIDATION_FAILED'],
      [{}, 400, 'VALIDATION_FAILED'],
    ];
    for (const [body, status, code] of cases) expectError(await add(body), status, code);
    expectError(
      await platform.api('POST', `/api/v1/projects/${project.id}/domains`, {
        token: m.admin.token,
        rawBody: 'not json',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'INVALID_JSON',
    );
    expectError(await add({ domain: `${label()}.com` }, m.admin.token, '00000000-0000-4000-8000-000000000000'), 404, 'PROJECT_NOT_FOUND');
    expect((await list()).body.data.domains).toEqual(before);
  });

  it('gives a hostname to one project platform-wide: two racing adds, from two projects, have one winner', async () => {
    const other = await newProject();
    for (let round = 0; round < 3; round++) {
      const host = `race.${label()}.com`;
      const replies = await Promise.all([
        add({ domain: host }),
        add({ domain: host }, m.owner.token, other.id),
        add({ domain: host }),
        add({ domain: host }, m.owner.token, other.id),
      ]);
      const winners = replies.filter((r) => r.status === 201);
      expect(winners, replies.map((r) => `${r.status} ${r.body.code ?? ''}`).join(', ')).toHaveLength(1);
      for (const loser of replies.filter((r) => r.status !== 201)) expectError(loser, 409, 'DOMAIN_TAKEN');
      const owners = [...(await list()).body.data.domains, ...(await list(m.member.token, other.id)).body.data.domains].filter(
        (d) => d.domain === host,
      );
      expect(owners).toHaveLength(1);
      expect(owners[0].id).toBe(winners[0]!.body.data.id);
      expect(await item(keys.domainHost(host))).toMatchObject({ domain_id: winners[0]!.body.data.id });
    }
  }, 60_000);

  it("lists the project's domains, oldest first", async () => {
    const other = await newProject();
    const first = (await add({ domain: `one.${label()}.com` }, m.admin.token, other.id)).body.data;
    const second = (await add({ domain: `two.${label()}.com` }, m.admin.token, other.id)).body.data;
    const reply = await list(m.member.token, other.id);
    expect(reply.status).toBe(200);
    expect(reply.body.data.domains.map((d: { id: string }) => d.id)).toEqual([first.id, second.id]);
    expect(reply.body.data.domains[0]).toEqual(first);
  });
});

describe('verification by DNS look-ups', () => {
  it('byo_dns: failed without the TXT token, verified once it is there; verifying again changes nothing', async () => {
    const host = `www.${label()}.com`;
    const d = (await add({ domain: host })).body.data;
    dns.set(`_slipway-challenge.${host}`, 'TXT', ['some-other-token']);
    const missed = await verify(d.id);
    expect(missed.status).toBe(200);
    expect(missed.body.data).toMatchObject({ status: 'failed', verified_at: null, last_verification_attempt: expect.any(String) });
    expect(dns.queries).toContain(`_slipway-challenge.${host} TXT`);

    dns.set(`_slipway-challenge.${host}`, 'TXT', ['v=spf1 -all', d.verification_token]);
    const ok = await verify(d.id);
    expect(ok.body.data).toMatchObject({ status: 'verified', verified_at: ok.body.data.last_verification_attempt, ns_delegated_at: null });
    expect(ok.body.data.last_verification_attempt >= missed.body.data.last_verification_attempt).toBe(true);
    // SSL is the next step, queued to the SSL-retries worker (domains-tls.test.ts): pending in this reply, so the diagnostic link stays.
    expect(ok.body.data.ssl_status).toBe('pending');
    expect(ok.body.data.debug_url).toBeDefined();

    // Verifying again looks nothing up and changes nothing of the verification. An SSL-retries worker (another
    // test file's, on the shared local queue) may meanwhile move the ssl_ fields and add the certificate's
    // validation CNAME to dns_records; the records verification gave stay.
    const verification = (x: Record<string, unknown>) => {
      const { status, verified_at, last_verification_attempt, ns_delegated_at, verification_token } = x;
      return { status, verified_at, last_verification_attempt, ns_delegated_at, verification_token };
    };
    const ownRecords = (x: { dns_records: { type: string; note: string }[] }) =>
      x.dns_records.filter((r) => !r.note.startsWith('Lets the certificate authority'));
    const again = await verify(d.id);
    const reread = (await read(d.id)).body.data;
    for (const later of [again.body.data, reread]) {
      expect(verification(later)).toEqual(verification(ok.body.data));
      expect(ownRecords(later)).toEqual(ownRecords(ok.body.data));
    }
    expect(ownRecords(ok.body.data).map((r) => r.type)).toEqual(['CNAME', 'TXT']);
  });

  it('a name with no record at all (NXDOMAIN) fails verification', async () => {
    const d = (await add({ domain: `${label()}.com` })).body.data;
    const reply = await verify(d.id);
    expect(reply.body.data).toMatchObject({ status: 'failed', verified_at: null });
  });

  it('a resolver that does not answer is ours to fix: 503, nothing recorded', async () => {
    const d = (await add({ domain: `www.${label()}.com` })).body.data;
    dns.set(`_slipway-challenge.${d.domain}`, 'TXT', [d.verification_token]);
    // A loopback port nobody listens on: the query is refused, nothing leaves the machine.
    const { createSocket } = await import('node:dgram');
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const closedPort = socket.address().port;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    process.env.DNS_RESOLVER = `127.0.0.1:${closedPort}`;
    expectError(await verify(d.id), 503, 'DNS_LOOKUP_UNAVAILABLE');
    process.env.DNS_RESOLVER = dns.address;
    expect((await read(d.id)).body.data).toEqual(d);
  });

  it('managed_dns: a hosted zone with two name servers; awaiting_delegation until the NS records name them', async () => {
    const host = `${label()}.com`;
    const reply = await add({ domain: host, connection_mode: 'managed_dns' });
    expect(reply.status).toBe(201);
    const d = reply.body.data;
    expect(Object.keys(d).sort()).toEqual([...SPEC_FIELDS].sort());
    expect(d).toMatchObject({ connection_mode: 'managed_dns', status: 'awaiting_delegation', is_apex: true, ns_delegated_at: null });
    expect(d.cdn_dns_ns1).toEqual(expect.any(String));
    expect(d.cdn_dns_ns2).toEqual(expect.any(String));
    expect(d.cdn_dns_ns1).not.toBe(d.cdn_dns_ns2);
    expect(Number.isInteger(d.cdn_dns_zone_id)).toBe(true);
    expect(d.dns_records).toEqual([
      { name: host, type: 'ALIAS', value: `${project.subdomain}.${config.siteDomain()}`, note: expect.any(String) },
    ]);
    const stored = await item(keys.domain(d.id));
    const zone = await route53().send(new GetHostedZoneCommand({ Id: stored!.hosted_zone_id as string }));
    expect(zone.HostedZone!.Name!.replace(/\.$/, '')).toBe(host);
    // A second managed domain gets its own zone number.
    const second = (await add({ domain: `${label()}.com`, connection_mode: 'managed_dns' })).body.data;
    expect(second.cdn_dns_zone_id).not.toBe(d.cdn_dns_zone_id);

    dns.set(host, 'NS', ['ns1.previous-provider.example', 'ns2.previous-provider.example']);
    const waiting = await verify(d.id);
    expect(waiting.body.data).toMatchObject({
      status: 'awaiting_delegation',
      ns_delegated_at: null,
      verified_at: null,
      last_verification_attempt: expect.any(String),
    });
    expect(dns.queries).toContain(`${host} NS`);

    dns.set(host, 'NS', [d.cdn_dns_ns2.toUpperCase(), `${d.cdn_dns_ns1}.`, 'ns-extra.example']);
    const delegated = await verify(d.id);
    expect(delegated.body.data).toMatchObject({ status: 'verified', ns_delegated_at: expect.any(String) });
    expect(delegated.body.data.verified_at).toBe(delegated.body.data.ns_delegated_at);

    // Removing it deletes the zone and frees the hostname.
    const removed = await remove(d.id);
    expect(removed.status).toBe(200);
    expect(removed.body.data.deleted_at).toEqual(expect.any(String));
    await expect(route53().send(new GetHostedZoneCommand({ Id: stored!.hosted_zone_id as string }))).rejects.toMatchObject({
      name: 'NoSuchHostedZone',
    });
    expect(await item(keys.domainHost(host))).toBeUndefined();
  });
});

describe('removing a domain', () => {
  it('sets deleted_at, releases the hostname, and the id answers 404 afterwards', async () => {
    const host = `shop.${label()}.com`;
    const d = (await add({ domain: host })).body.data;
    const reply = await remove(d.id);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ id: d.id, domain: host, deleted_at: expect.any(String) });
    expect(reply.body.data.updated_at).toBe(reply.body.data.deleted_at);
    expectError(await read(d.id), 404, 'DOMAIN_NOT_FOUND');
    expectError(await verify(d.id), 404, 'DOMAIN_NOT_FOUND');
    expectError(await remove(d.id), 404, 'DOMAIN_NOT_FOUND');
    expect((await list()).body.data.domains.some((x: { id: string }) => x.id === d.id)).toBe(false);
    const stored = await item(keys.domain(d.id));
    expect(stored!.ttl).toEqual(expect.any(Number));
    // The hostname is free again, for any project.
    const again = await add({ domain: host });
    expect(again.status).toBe(201);
    expect(again.body.data.id).not.toBe(d.id);
  });

  it('two racing removals: one succeeds, the other finds nothing', async () => {
    const d = (await add({ domain: `${label()}.com` })).body.data;
    const replies = await Promise.all([remove(d.id), remove(d.id), remove(d.id)]);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((x) => x.status !== 200)) expectError(r, 404, 'DOMAIN_NOT_FOUND');
  });
});

describe('deleting the project', () => {
  it('removes its domains: hostnames released, managed zones deleted', async () => {
    const doomed = await newProject();
    const byo = (await add({ domain: `www.${label()}.com` }, m.admin.token, doomed.id)).body.data;
    const managed = (await add({ domain: `${label()}.com`, connection_mode: 'managed_dns' }, m.admin.token, doomed.id)).body.data;
    const zoneId = (await item(keys.domain(managed.id)))!.hosted_zone_id as string;
    expect((await platform.api('DELETE', `/api/v1/projects/${doomed.id}`, { token: m.admin.token })).status).toBe(202);
    // What the deletions worker runs for the queued message. Another test file's
    // worker polls the same local queue and may run it too: whichever run ends
    // last answers 'gone', and everything below holds either way.
    expect(['deleted', 'gone']).toContain(await deleteProject(doomed.id));
    for (const d of [byo, managed]) {
      expect(await item(keys.domainHost(d.domain))).toBeUndefined();
      expect((await item(keys.domain(d.id)))!.deleted_at).toEqual(expect.any(String));
    }
    await expect(route53().send(new GetHostedZoneCommand({ Id: zoneId }))).rejects.toMatchObject({ name: 'NoSuchHostedZone' });
    expect((await add({ domain: byo.domain })).status).toBe(201);
  }, 60_000);
});

describe('authorization', () => {
  it('every domain endpoint: owner, admin and the team API key pass; a member reads and verifies only; other teams get 404; no credential 401', async () => {
    const d = (await add({ domain: `auth.${label()}.com` })).body.data;
    const unknownId = '00000000-0000-4000-8000-000000000000';

    for (const token of [m.owner.token, m.admin.token, m.member.token, m.apiKey.token]) {
      expect((await list(token)).status).toBe(200);
      expect((await read(d.id, token)).status).toBe(200);
      expect((await verify(d.id, token)).status).toBe(200);
    }
    for (const token of [m.owner.token, m.apiKey.token]) {
      const extra = (await add({ domain: `k.${label()}.com` }, token)).body.data;
      expect(extra.id).toBeDefined();
      expect((await remove(extra.id, token)).status).toBe(200);
    }
    // A member may not change the project's domains.
    expectError(await add({ domain: `member.${label()}.com` }, m.member.token), 403, 'FORBIDDEN');
    expectError(await remove(d.id, m.member.token), 403, 'FORBIDDEN');

    // Another team's session or API key cannot tell the project or domain exists.
    for (const token of [m.outsider.token, otherTeamKey]) {
      expectError(await add({ domain: `x.${label()}.com` }, token), 404, 'PROJECT_NOT_FOUND');
      expectError(await list(token), 404, 'PROJECT_NOT_FOUND');
      expectError(await read(d.id, token), 404, 'DOMAIN_NOT_FOUND');
      expectError(await verify(d.id, token), 404, 'DOMAIN_NOT_FOUND');
      expectError(await remove(d.id, token), 404, 'DOMAIN_NOT_FOUND');
      expectError(await read(unknownId, token), 404, 'DOMAIN_NOT_FOUND');
    }
    // No credential, or a made-up one.
    for (const token of [null, 'not-a-token']) {
      expectError(await add({ domain: `x.${label()}.com` }, token), 401, 'UNAUTHENTICATED');
      expectError(await list(token), 401, 'UNAUTHENTICATED');
      expectError(await read(d.id, token), 401, 'UNAUTHENTICATED');
      expectError(await verify(d.id, token), 401, 'UNAUTHENTICATED');
      expectError(await remove(d.id, token), 401, 'UNAUTHENTICATED');
    }
    expectError(await read('not-a-uuid'), 404, 'DOMAIN_NOT_FOUND');
    // Nothing any refused caller sent changed the domain.
    const after = (await read(d.id)).body.data;
    expect({ ...after, updated_at: null, last_verification_attempt: null, status: null }).toEqual({
      ...d,
      updated_at: null,
      last_verification_attempt: null,
      status: null,
    });
    expect(after.deleted_at).toBeNull();
  }, 60_000);
});
