import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../lib/cli/admin.ts';
import { publishNotice } from '../../lib/notices/notices.ts';
import { getWatermark } from '../../lib/notices/records.ts';
import { putMembership } from '../../lib/teams/membership-records.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

const minutes = (n: number) => new Date(Date.now() + n * 60_000);
const uniqueKey = (name: string) => `${name}-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
});
afterAll(() => platform?.stop());

const keysOf = (reply: { body: any }) => (reply.body.data.notices as { key: string }[]).map((n) => n.key);

describe('GET /api/v1/notices: authorization matrix', () => {
  it('401 without a token; 403 SESSION_REQUIRED for an API key', async () => {
    expectError(await platform.api('GET', '/api/v1/notices'), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('GET', '/api/v1/notices', { token: m.apiKey.token }), 403, 'SESSION_REQUIRED');
  });

  it.each(['owner', 'admin', 'member'] as const)('200 for the %s of the team', async (who) => {
    const reply = await platform.api('GET', '/api/v1/notices', { token: m[who].token });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ notices: expect.any(Array), unread_count: expect.any(Number), seen_at: null });
  });

  it('another team: its member sees their own team, naming this team is 403', async () => {
    expect((await platform.api('GET', '/api/v1/notices', { token: m.outsider.token })).status).toBe(200);
    expectError(
      await platform.api('GET', '/api/v1/notices', { token: m.outsider.token, headers: { 'x-team-id': m.team.id } }),
      403,
      'FORBIDDEN',
    );
  });

  it('a platform admin who is no member: 400 NO_CURRENT_TEAM, 403 naming the team', async () => {
    expectError(await platform.api('GET', '/api/v1/notices', { token: m.platformAdmin.token }), 400, 'NO_CURRENT_TEAM');
    expectError(
      await platform.api('GET', '/api/v1/notices', { token: m.platformAdmin.token, headers: { 'x-team-id': m.team.id } }),
      403,
      'FORBIDDEN',
    );
  });
});

describe('GET /api/v1/notices: what the caller may see', () => {
  it('published, unexpired notices up to the caller role; never future, expired or higher-role ones', async () => {
    const everyone = await publishNotice({
      key: uniqueKey('everyone'),
      title: 'Scheduled maintenance',
      body: 'Sunday 02:00 UTC',
      publishedAt: minutes(-10),
    });
    const admins = await publishNotice({ key: uniqueKey('admins'), title: 'Billing change', publishedAt: minutes(-9), minRole: 'admin' });
    const owners = await publishNotice({ key: uniqueKey('owners'), title: 'Ownership audit', publishedAt: minutes(-8), minRole: 'owner' });
    const future = await publishNotice({ key: uniqueKey('future'), title: 'Not yet', publishedAt: minutes(60) });
    const expired = await publishNotice({ key: uniqueKey('expired'), title: 'Gone', publishedAt: minutes(-60), expiresAt: minutes(-1) });
    const ours = new Set([everyone, admins, owners, future, expired].map((n) => n.key));
    const visible = async (token: string) => keysOf(await platform.api('GET', '/api/v1/notices', { token })).filter((k) => ours.has(k));

    expect(await visible(m.member.token)).toEqual([everyone.key]);
    expect(await visible(m.admin.token)).toEqual([admins.key, everyone.key]);
    expect(await visible(m.owner.token)).toEqual([owners.key, admins.key, everyone.key]);

    const reply = await platform.api('GET', '/api/v1/notices', { token: m.member.token });
    expect(reply.body.data.notices.find((n: any) => n.key === everyone.key)).toEqual({
      key: everyone.key,
      title: 'Scheduled maintenance',
      body: 'Sunday 02:00 UTC',
      published_at: everyone.published_at,
      expires_at: null,
      min_role: null,
      unread: true,
    });
  });

  it('unread_count counts visible notices published after the watermark; seen clears it', async () => {
    const person = await makeUser();
    await putMembership(m.team.id, person.user.user_id, 'member');
    const token = person.token;
    const before = await platform.api('GET', '/api/v1/notices', { token });
    expect(before.body.data.unread_count).toBe(before.body.data.notices.length);
    expect(before.body.data.unread_count).toBeGreaterThan(0);

    const seen = await platform.api('POST', '/api/v1/notices/seen', { token, body: { seen_at: new Date().toISOString() } });
    expect(seen.status).toBe(200);
    const after = await platform.api('GET', '/api/v1/notices', { token });
    expect(after.body.data.unread_count).toBe(0);
    expect(after.body.data.seen_at).toBe(seen.body.data.seen_at);
    expect(after.body.data.notices.every((n: any) => n.unread === false)).toBe(true);

    const fresh = await publishNotice({ key: uniqueKey('fresh'), title: 'New feature', publishedAt: minutes(10) });
    // Published ahead of now: not visible yet, so not counted.
    expect((await platform.api('GET', '/api/v1/notices', { token })).body.data.unread_count).toBe(0);
    const justNow = await publishNotice({ key: uniqueKey('just-now'), title: 'Now live' });
    const later = await platform.api('GET', '/api/v1/notices', { token });
    expect(later.body.data.unread_count).toBe(1);
    expect(later.body.data.notices.find((n: any) => n.key === justNow.key).unread).toBe(true);
    expect(keysOf(later)).not.toContain(fresh.key);
  });
});

describe('POST /api/v1/notices/seen', () => {
  it('401 without a token, 403 SESSION_REQUIRED for an API key; 200 for any signed-in person, team or not', async () => {
    const body = { seen_at: new Date().toISOString() };
    expectError(await platform.api('POST', '/api/v1/notices/seen', { body }), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('POST', '/api/v1/notices/seen', { token: m.apiKey.token, body }), 403, 'SESSION_REQUIRED');
    // The watermark belongs to the person, not to a team: members, outsiders and platform admins alike.
    for (const who of ['owner', 'admin', 'member', 'outsider', 'platformAdmin'] as const) {
      const reply = await platform.api('POST', '/api/v1/notices/seen', { token: m[who].token, body });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ message: 'Watermark updated', seen_at: new Date(body.seen_at).toISOString() });
    }
  });

  it('monotonic: an earlier timestamp is ignored and does not rewind the watermark', async () => {
    const { user, token } = await makeUser();
    const t1 = minutes(-5).toISOString();
    const t0 = minutes(-30).toISOString();
    expect((await platform.api('POST', '/api/v1/notices/seen', { token, body: { seen_at: t1 } })).body.data).toEqual({
      message: 'Watermark updated',
      seen_at: t1,
    });
    const earlier = await platform.api('POST', '/api/v1/notices/seen', { token, body: { seen_at: t0 } });
    expect(earlier.status).toBe(200);
    expect(earlier.body.data).toEqual({ message: 'Watermark updated', seen_at: t1 });
    expect(await getWatermark(user.user_id)).toBe(t1);
  });

  it('accepts up to five minutes ahead; more than five minutes in the future is 400 NOTICE_SEEN_AT_IN_FUTURE', async () => {
    const { user, token } = await makeUser();
    const ahead = minutes(4).toISOString();
    expect((await platform.api('POST', '/api/v1/notices/seen', { token, body: { seen_at: ahead } })).status).toBe(200);
    const reply = await platform.api('POST', '/api/v1/notices/seen', { token, body: { seen_at: minutes(6).toISOString() } });
    expectError(reply, 400, 'NOTICE_SEEN_AT_IN_FUTURE');
    expect(reply.body.error).toBe('seen_at is more than five minutes in the future.');
    expect(await getWatermark(user.user_id)).toBe(ahead);
  });

  it('timestamps with an offset are normalized to UTC', async () => {
    const { token } = await makeUser();
    const reply = await platform.api('POST', '/api/v1/notices/seen', { token, body: { seen_at: '2025-03-01T12:00:00+02:00' } });
    expect(reply.body.data).toEqual({ message: 'Watermark updated', seen_at: '2025-03-01T10:00:00.000Z' });
  });

  it('400 VALIDATION_FAILED for a missing or malformed seen_at, changing nothing', async () => {
    const { user, token } = await makeUser();
    for (const body of [
      {},
      { seen_at: 'yesterday' },
      { seen_at: 1700000000 },
      { seen_at: '2025-03-01' },
      { seen_at: new Date().toISOString(), extra: 1 },
    ]) {
      expectError(await platform.api('POST', '/api/v1/notices/seen', { token, body }), 400, 'VALIDATION_FAILED');
    }
    expect(await getWatermark(user.user_id)).toBeNull();
  });

  it('racing timestamps: the latest wins whatever order they land in', async () => {
    for (let round = 0; round < 3; round++) {
      const { user, token } = await makeUser();
      const stamps = Array.from({ length: 8 }, (_, i) => minutes(-60 + i * 7).toISOString());
      const shuffled = [...stamps].sort(() => Math.random() - 0.5);
      const replies = await Promise.all(
        shuffled.map((seen_at) => platform.api('POST', '/api/v1/notices/seen', { token, body: { seen_at } })),
      );
      expect(replies.every((r) => r.status === 200 && r.body.data.message === 'Watermark updated')).toBe(true);
      expect(await getWatermark(user.user_id)).toBe(stamps[stamps.length - 1]);
    }
  });
});

describe('POST /api/v1/notices/{key}/dismiss', () => {
  it('authorization matrix: 401, 403 SESSION_REQUIRED for an API key, 200 for members, 403 for another team, platform admin', async () => {
    const notice = await publishNotice({ key: uniqueKey('matrix'), title: 'Matrix', publishedAt: minutes(-1) });
    const path = `/api/v1/notices/${notice.key}/dismiss`;
    expectError(await platform.api('POST', path), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('POST', path, { token: m.apiKey.token }), 403, 'SESSION_REQUIRED');
    for (const who of ['owner', 'admin', 'member'] as const) {
      const reply = await platform.api('POST', path, { token: m[who].token });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({
        message: 'Notice dismissed',
        key: notice.key,
        team_id: m.team.id,
        dismissed_at: expect.any(String),
      });
    }
    expectError(await platform.api('POST', path, { token: m.outsider.token, headers: { 'x-team-id': m.team.id } }), 403, 'FORBIDDEN');
    expectError(await platform.api('POST', path, { token: m.platformAdmin.token }), 400, 'NO_CURRENT_TEAM');
    expectError(await platform.api('POST', path, { token: m.platformAdmin.token, headers: { 'x-team-id': m.team.id } }), 403, 'FORBIDDEN');
  });

  it('hides the notice for this person in this team only; the first dismissal stands, a repeat is a no-op', async () => {
    const person = await makeUser();
    await putMembership(m.team.id, person.user.user_id, 'member');
    await putMembership(m.otherTeam.id, person.user.user_id, 'member');
    const notice = await publishNotice({ key: uniqueKey('per-team'), title: 'Per team', publishedAt: minutes(-1) });
    const path = `/api/v1/notices/${notice.key}/dismiss`;

    const first = await platform.api('POST', path, { token: person.token, headers: { 'x-team-id': m.team.id } });
    expect(first.status).toBe(200);
    expect(first.body.data.message).toBe('Notice dismissed');
    const again = await platform.api('POST', path, { token: person.token, headers: { 'x-team-id': m.team.id } });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);

    const here = await platform.api('GET', '/api/v1/notices', { token: person.token, headers: { 'x-team-id': m.team.id } });
    expect(keysOf(here)).not.toContain(notice.key);
    const there = await platform.api('GET', '/api/v1/notices', { token: person.token, headers: { 'x-team-id': m.otherTeam.id } });
    expect(keysOf(there)).toContain(notice.key);
    // Another person in the same team still sees it.
    expect(keysOf(await platform.api('GET', '/api/v1/notices', { token: m.owner.token }))).toContain(notice.key);
  });

  it('racing dismissals of one notice: all 200, one dismissal recorded', async () => {
    const { user, token } = await makeUser();
    await putMembership(m.team.id, user.user_id, 'member');
    const notice = await publishNotice({ key: uniqueKey('race'), title: 'Race', publishedAt: minutes(-1) });
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => platform.api('POST', `/api/v1/notices/${notice.key}/dismiss`, { token })),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const stamps = new Set(replies.map((r) => r.body.data.dismissed_at));
    expect(stamps.size).toBe(1);
  });

  it('unknown, expired, not yet published and above-role keys are the same 404 NOTICE_NOT_FOUND', async () => {
    const expired = await publishNotice({ key: uniqueKey('old'), title: 'Old', publishedAt: minutes(-60), expiresAt: minutes(-1) });
    const future = await publishNotice({ key: uniqueKey('soon'), title: 'Soon', publishedAt: minutes(30) });
    const adminsOnly = await publishNotice({ key: uniqueKey('admin-only'), title: 'Admins', publishedAt: minutes(-1), minRole: 'admin' });
    const replies = [
      await platform.api('POST', `/api/v1/notices/${uniqueKey('nope')}/dismiss`, { token: m.member.token }),
      await platform.api('POST', `/api/v1/notices/${expired.key}/dismiss`, { token: m.member.token }),
      await platform.api('POST', `/api/v1/notices/${future.key}/dismiss`, { token: m.member.token }),
      await platform.api('POST', `/api/v1/notices/${adminsOnly.key}/dismiss`, { token: m.member.token }),
      await platform.api('POST', `/api/v1/notices/${encodeURIComponent('Bad Key#1')}/dismiss`, { token: m.member.token }),
    ];
    for (const reply of replies) {
      expectError(reply, 404, 'NOTICE_NOT_FOUND');
      expect(reply.body.error).toBe('Notice not found.');
      expect(reply.body.details).toBeNull();
    }
    // The admin sees the admins-only notice and may dismiss it.
    expect((await platform.api('POST', `/api/v1/notices/${adminsOnly.key}/dismiss`, { token: m.admin.token })).status).toBe(200);
  });
});

describe('admin publish-notice', () => {
  it('publishes a notice members see, refuses a second notice with the same key and bad options', async () => {
    const key = uniqueKey('cli');
    const published = (await runAdmin([
      'publish-notice',
      '--key',
      key,
      '--title',
      'From the CLI',
      '--body',
      'Hello',
      '--min-role',
      'member',
    ])) as any;
    expect(published).toMatchObject({ key, title: 'From the CLI', body: 'Hello', min_role: 'member', expires_at: null });
    expect(keysOf(await platform.api('GET', '/api/v1/notices', { token: m.member.token }))).toContain(key);
    await expect(runAdmin(['publish-notice', '--key', key, '--title', 'Again'])).rejects.toThrow(`A notice with key ${key} exists`);
    await expect(runAdmin(['publish-notice', '--key', 'Bad Key', '--title', 'T'])).rejects.toThrow('--key is 1 to 128');
    await expect(runAdmin(['publish-notice', '--key', uniqueKey('x'), '--title', 'T', '--min-role', 'god'])).rejects.toThrow(
      '--min-role is member, admin or owner',
    );
    await expect(runAdmin(['publish-notice', '--key', uniqueKey('x'), '--title', 'T', '--publish-at', 'tomorrow'])).rejects.toThrow(
      'not an ISO 8601 timestamp',
    );
    await expect(
      runAdmin([
        'publish-notice',
        '--key',
        uniqueKey('x'),
        '--title',
        'T',
        '--publish-at',
        '2030-01-02T00:00:00Z',
        '--expires-at',
        '2030-01-01T00:00:00Z',
      ]),
    ).rejects.toThrow('--expires-at must be after the publish time');
  });
});
