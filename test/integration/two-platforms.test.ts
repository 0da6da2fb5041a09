import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createSession } from '../../lib/identity/credential-records.ts';
import { createTeam } from '../../lib/teams/teams.ts';
import { DASHBOARD_ORIGIN, makeUser, startTestPlatform, type Actor, type TestPlatform } from '../support/platform.ts';
import { expectEnvelopeError } from '../support/envelope.ts';
import { siteRequest } from '../support/sites.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Two local platforms in one process (issue 33): each has its configuration as an object of its own
 * (lib/config.ts PlatformEnv), its own tables and buckets on the run's shared moto_server, and its own
 * caches, so a site with the same subdomain serves each platform's own content, and nothing one
 * platform wrote or issued is known to the other. Their own platforms: this is what the file tests.
 */
let a: TestPlatform;
let b: TestPlatform;
let ownerA: Actor;
let ownerB: Actor;
const subdomain = `twin-${randomBytes(4).toString('hex')}`;
const host = `${subdomain}.localhost`;

/** An owner with a team of their own on `platform`, made through its configuration. */
function ownerOn(platform: TestPlatform): Promise<Actor> {
  return platform.platformEnv.run(async () => {
    const { user } = await makeUser();
    await createTeam({ name: `Team ${subdomain}`, ownerUserId: user.user_id });
    // Opened after the membership: the team is the session's current one.
    return { user, token: await createSession(user.user_id) };
  });
}

beforeAll(async () => {
  // No drivers: serving and the API are what is compared, and two sets of runners would only slow the file.
  a = await startTestPlatform({ drivers: [] });
  b = await startTestPlatform({ drivers: [] });
  [ownerA, ownerB] = await Promise.all([ownerOn(a), ownerOn(b)]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

describe('two local platforms in one process', () => {
  it('have two tables, and each serves its own site under the same subdomain, concurrently', async () => {
    expect(a.env.TABLE_NAME).not.toBe(b.env.TABLE_NAME);
    expect(a.port).not.toBe(b.port);
    const [onA, onB] = await Promise.all([
      deploy(a, ownerA.token, site({ 'index.html': '<h1>platform A</h1>' }), { name: 'Twin', subdomain }),
      deploy(b, ownerB.token, site({ 'index.html': '<h1>platform B</h1>' }), { name: 'Twin', subdomain }),
    ]);
    expect(onA.begin.project.subdomain).toBe(subdomain);
    expect(onB.begin.project.subdomain).toBe(subdomain);
    // Many requests to both at once: each platform's serving caches (records, objects) stay its own.
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => siteRequest(i % 2 === 0 ? a.port : b.port, host, '/')));
    replies.forEach((reply, i) => {
      expect(reply.status).toBe(200);
      expect(reply.text).toBe(i % 2 === 0 ? '<h1>platform A</h1>' : '<h1>platform B</h1>');
    });
  });

  it("refuses the other platform's session token with 401, and keeps each record in its own table", async () => {
    const [mine, theirs] = await Promise.all([
      a.api('GET', '/api/v1/me', { token: ownerA.token }),
      b.api('GET', '/api/v1/me', { token: ownerA.token }),
    ]);
    expect(mine.status).toBe(200);
    expectEnvelopeError(theirs, 401, 'UNAUTHENTICATED');

    const project = await a.api('POST', '/api/v1/projects', { token: ownerA.token, body: { name: `Only on A ${subdomain}` } });
    expect(project.status).toBe(201);
    const key = keys.project(project.body.data.id);
    const read = (platform: TestPlatform) =>
      platform.platformEnv.run(() => dynamo().send(new GetCommand({ TableName: config.tableName(), Key: key, ConsistentRead: true })));
    const [inA, inB] = await Promise.all([read(a), read(b)]);
    expect(inA.Item?.name).toBe(`Only on A ${subdomain}`);
    expect(inB.Item).toBeUndefined();
    expect((await b.api('GET', `/api/v1/projects/${project.body.data.id}`, { token: ownerB.token })).status).toBe(404);
  });

  it('answers CORS by its own allowed origins, through the one handler module both platforms run', async () => {
    const otherOrigin = 'https://other-console.example.test';
    b.env.CORS_ORIGINS = otherOrigin;
    const ask = (platform: TestPlatform, token: string, origin: string) =>
      platform.api('GET', '/api/v1/me', { token, headers: { origin } });
    const [aOwn, aOther, bOwn, bOther] = await Promise.all([
      ask(a, ownerA.token, DASHBOARD_ORIGIN),
      ask(a, ownerA.token, otherOrigin),
      ask(b, ownerB.token, otherOrigin),
      ask(b, ownerB.token, DASHBOARD_ORIGIN),
    ]);
    expect(aOwn.headers.get('access-control-allow-origin')).toBe(DASHBOARD_ORIGIN);
    expect(aOther.headers.get('access-control-allow-origin')).toBeNull();
    expect(bOwn.headers.get('access-control-allow-origin')).toBe(otherOrigin);
    expect(bOther.headers.get('access-control-allow-origin')).toBeNull();
  });
});
