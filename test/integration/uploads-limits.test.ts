import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../../lib/aws/clients.ts';
import { keys } from '../../lib/db/keys.ts';
import { createTeam } from '../../lib/teams/teams.ts';
import { requestHash } from '../../lib/idempotency/idempotency.ts';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { runCli } from '../support/cli.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { putMissing, uniqueName, uniqueSite } from '../support/uploads.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  // Room for the projects the Idempotency-Key tests create; the plan tests use teams of their own.
  await setTeamPlan(m.team.id, 'team');
});
afterAll(() => platform?.stop());

const beginUpload = (token: string, body: unknown, headers: Record<string, string> = {}) =>
  platform.api('POST', '/api/v1/uploads', { token, body, headers });

/** The operator CLI, as an operator runs it, against this platform's table. */
async function admin(...args: string[]) {
  const run = await runCli(['admin', ...args], {
    ...platform.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
}

/** A team of its own (so counts start at zero) with a session for its owner. */
async function freshTeam() {
  const owner = await makeUser();
  const team = await createTeam({ name: uniqueName('Team'), ownerUserId: owner.user.user_id });
  return { team, token: owner.token, headers: { 'x-team-id': team.id } };
}

// These work on teams of their own (the unknown plan is refused before it changes one), so they run concurrently, the
// operator commands' process starts overlapping; the Idempotency-Key cases count the shared team's projects and run after.
describe.concurrent('plans: PLAN_LIMIT_EXCEEDED', { timeout: 120_000 }, () => {
  it('refuses the sixth site of a free team, and set-plan lifts the limit', async () => {
    const t = await freshTeam();
    for (let i = 0; i < 5; i++) {
      expect((await beginUpload(t.token, { files: uniqueSite().files, project: { name: uniqueName() } }, t.headers)).status).toBe(201);
    }
    const sixth = await beginUpload(t.token, { files: uniqueSite().files, project: { name: uniqueName() } }, t.headers);
    expectError(sixth, 403, 'PLAN_LIMIT_EXCEEDED');
    expect(sixth.body.details).toEqual({ limit: 'sites', plan: 'free', max_sites: 5 });
    expect(await admin('set-plan', '--team', t.team.id, '--plan', 'pro')).toEqual({ team_id: t.team.id, plan: 'pro', suspended_at: null });
    expect((await beginUpload(t.token, { files: uniqueSite().files, project: { name: uniqueName() } }, t.headers)).status).toBe(201);
  });

  it('racing begins at the site limit: exactly the free places are taken', async () => {
    const t = await freshTeam();
    for (let i = 0; i < 3; i++) {
      expect((await beginUpload(t.token, { files: uniqueSite().files, project: { name: uniqueName() } }, t.headers)).status).toBe(201);
    }
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => beginUpload(t.token, { files: uniqueSite().files, project: { name: uniqueName() } }, t.headers)),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(2);
    for (const r of replies.filter((r) => r.status !== 201)) expectError(r, 403, 'PLAN_LIMIT_EXCEEDED');
    const list = await platform.api('GET', '/api/v1/projects', { token: t.token, headers: t.headers });
    expect(list.body.data.projects).toHaveLength(5);
  });

  it("refuses a manifest over the plan's upload allowance, before anything is created", async () => {
    const t = await freshTeam();
    const files = Array.from({ length: 26 }, (_, i) => ({
      path: i === 0 ? 'index.html' : `big/${i}.bin`,
      hash: i.toString(16).padStart(64, '0'),
      size: 10 * 1024 * 1024,
    }));
    const reply = await beginUpload(t.token, { files, project: { name: 'Big' } }, t.headers);
    expectError(reply, 403, 'PLAN_LIMIT_EXCEEDED');
    expect(reply.body.details).toEqual({
      limit: 'upload_bytes',
      plan: 'free',
      max_bytes: 250 * 1024 * 1024,
      total_bytes: 26 * 10 * 1024 * 1024,
    });
    const list = await platform.api('GET', '/api/v1/projects', { token: t.token, headers: t.headers });
    expect(list.body.data.projects).toHaveLength(0);
    await admin('set-plan', '--team', t.team.slug, '--plan', 'pro');
    expect((await beginUpload(t.token, { files, project: { name: 'Big' } }, t.headers)).status).toBe(201);
  });

  it('set-plan refuses an unknown plan', async () => {
    const run = await runCli(['admin', 'set-plan', '--team', m.team.id, '--plan', 'gold'], {
      ...platform.env,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('slipway: --plan is one of free, pro, team\n');
  });
});

describe.concurrent('suspended teams', { timeout: 120_000 }, () => {
  it('TEAM_SUSPENDED while suspended; suspend-team --off restores', async () => {
    const t = await freshTeam();
    const suspended = await admin('suspend-team', '--team', t.team.id);
    expect(suspended).toEqual({ team_id: t.team.id, plan: 'free', suspended_at: expect.any(String) });
    const reply = await beginUpload(t.token, { files: uniqueSite().files, project: { name: uniqueName() } }, t.headers);
    expectError(reply, 403, 'TEAM_SUSPENDED');
    expect(await admin('suspend-team', '--team', t.team.id, '--off')).toEqual({ team_id: t.team.id, plan: 'free', suspended_at: null });
    expect((await beginUpload(t.token, { files: uniqueSite().files, project: { name: uniqueName() } }, t.headers)).status).toBe(201);
  });
});

describe.concurrent('open upload sessions per team', { timeout: 120_000 }, () => {
  it('429 with Retry-After at the cap (10 on free); finalizing one frees a place', async () => {
    const t = await freshTeam();
    const s = uniqueSite();
    const first = await beginUpload(t.token, { files: s.files, project: { name: uniqueName() } }, t.headers);
    expect(first.status).toBe(201);
    const projectId = first.body.data.project_id;
    const more = await Promise.all(
      Array.from({ length: 11 }, () =>
        platform.api('POST', `/api/v1/projects/${projectId}/uploads`, { token: t.token, body: { files: uniqueSite().files } }),
      ),
    );
    // Racing at the cap: exactly nine more fit.
    expect(more.filter((r) => r.status === 201)).toHaveLength(9);
    for (const r of more.filter((r) => r.status !== 201)) {
      expectError(r, 429, 'TOO_MANY_UPLOAD_SESSIONS');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    await putMissing(platform, t.token, first.body.data.upload_id, first.body.data.missing, s);
    expect((await platform.api('POST', `/api/v1/uploads/${first.body.data.upload_id}/finalize`, { token: t.token })).status).toBe(200);
    expect(
      (await platform.api('POST', `/api/v1/projects/${projectId}/uploads`, { token: t.token, body: { files: uniqueSite().files } })).status,
    ).toBe(201);
  });
});

describe('Idempotency-Key', { timeout: 120_000 }, () => {
  it('a replay returns the original session and project with 201 and creates nothing', async () => {
    const body = { files: uniqueSite().files, project: { name: uniqueName() } };
    const key = `deploy-${Date.now()}`;
    const first = await beginUpload(m.member.token, body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const count = (await platform.api('GET', '/api/v1/projects?limit=100', { token: m.member.token })).body.data.projects.length;
    const replay = await beginUpload(m.member.token, body, { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.body.data).toEqual(first.body.data);
    expect((await platform.api('GET', '/api/v1/projects?limit=100', { token: m.member.token })).body.data.projects.length).toBe(count);
  });

  it('the same key with a different body is refused with IDEMPOTENCY_KEY_REUSED', async () => {
    const key = `k-${Date.now()}`;
    expect(
      (await beginUpload(m.member.token, { files: uniqueSite().files, project: { name: uniqueName() } }, { 'idempotency-key': key }))
        .status,
    ).toBe(201);
    const other = await beginUpload(
      m.member.token,
      { files: uniqueSite().files, project: { name: uniqueName() } },
      { 'idempotency-key': key },
    );
    expectError(other, 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('an invalid key is 400 IDEMPOTENCY_KEY_INVALID', async () => {
    for (const key of ['has space', 'x'.repeat(256)]) {
      expectError(
        await beginUpload(m.member.token, { files: uniqueSite().files, project: { name: uniqueName() } }, { 'idempotency-key': key }),
        400,
        'IDEMPOTENCY_KEY_INVALID',
      );
    }
  });

  it('concurrent requests with one key create one project', async () => {
    const body = { files: uniqueSite().files, project: { name: uniqueName() } };
    const key = `race-${Date.now()}`;
    const replies = await Promise.all(Array.from({ length: 5 }, () => beginUpload(m.member.token, body, { 'idempotency-key': key })));
    for (const r of replies) expect(r.status).toBe(201);
    expect(new Set(replies.map((r) => r.body.data.project_id)).size).toBe(1);
    expect(new Set(replies.map((r) => r.body.data.upload_id)).size).toBe(1);
    const list = await platform.api('GET', '/api/v1/projects?limit=100', { token: m.member.token });
    expect(list.body.data.projects.filter((p: any) => p.name === body.project.name)).toHaveLength(1);
  });

  it('keys are per team: another team may use the same key', async () => {
    const key = `shared-${Date.now()}`;
    const a = await beginUpload(m.member.token, { files: uniqueSite().files, project: { name: uniqueName() } }, { 'idempotency-key': key });
    const b = await beginUpload(
      m.outsider.token,
      { files: uniqueSite().files, project: { name: uniqueName() } },
      { 'idempotency-key': key },
    );
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.data.project_id).not.toBe(b.body.data.project_id);
  });

  it('a failed request releases its key', async () => {
    const key = `fail-${Date.now()}`;
    expectError(
      await beginUpload(m.member.token, { files: [], project: { name: uniqueName() } }, { 'idempotency-key': key }),
      400,
      'INVALID_MANIFEST',
    );
    expect(
      (await beginUpload(m.member.token, { files: uniqueSite().files, project: { name: uniqueName() } }, { 'idempotency-key': key }))
        .status,
    ).toBe(201);
  });

  async function claimInProgress(key: string, body: unknown, ageMs: number) {
    const created = new Date(Date.now() - ageMs);
    await dynamo().send(
      new PutCommand({
        TableName: platform.env.TABLE_NAME,
        Item: {
          ...keys.idempotency(m.team.id, createHash('sha256').update(key).digest('hex')),
          type: 'idempotency',
          team_id: m.team.id,
          request_hash: requestHash('POST /api/v1/uploads', body),
          state: 'in_progress',
          created_at: created.toISOString(),
        },
      }),
    );
  }

  it('a request still running under the key: the duplicate waits, then 409 IDEMPOTENCY_KEY_IN_PROGRESS with Retry-After', async () => {
    const body = { files: uniqueSite().files, project: { name: uniqueName() } };
    const key = `busy-${Date.now()}`;
    await claimInProgress(key, body, 0);
    // The wait (15 s in the cloud) shortened: what is tested is its outcome, and the claim never completes.
    process.env.IDEMPOTENCY_WAIT_MS = '500';
    let reply: Awaited<ReturnType<typeof beginUpload>>;
    try {
      reply = await beginUpload(m.member.token, body, { 'idempotency-key': key });
    } finally {
      delete process.env.IDEMPOTENCY_WAIT_MS;
    }
    expectError(reply, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
    expect(reply.headers.get('retry-after')).toBe('1');
  });

  it('a claim abandoned by a request that died is taken over by the retry', async () => {
    const body = { files: uniqueSite().files, project: { name: uniqueName() } };
    const key = `dead-${Date.now()}`;
    await claimInProgress(key, body, 10 * 60_000);
    expect((await beginUpload(m.member.token, body, { 'idempotency-key': key })).status).toBe(201);
  });
});
