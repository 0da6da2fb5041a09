import { roleRank, type TeamRole } from '../access/rules.ts';
import { ApiError } from '../errors/api-error.ts';
import { NOTICE_NOT_FOUND, NOTICE_SEEN_AT_IN_FUTURE } from '../errors/catalogue/accounts.ts';
import {
  advanceWatermark,
  dismissedKeys,
  getNoticeItem,
  getWatermark,
  insertDismissal,
  insertNotice,
  type Notice,
  type NoticeItem,
  publishedNoticeItems,
} from './records.ts';

export type { Notice };

/** How far ahead of the server clock a client's `seen_at` may be (clock skew), per the spec. */
export const SEEN_AT_MAX_FUTURE_MS = 5 * 60 * 1000;

export const NOTICE_KEY_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}$/;

export class NoticeKeyTakenError extends Error {}

/** Adds a notice to the catalogue; a key names one notice forever (a conditional put refuses a second). */
export async function publishNotice(input: {
  key: string;
  title: string;
  body?: string | null;
  publishedAt?: Date;
  expiresAt?: Date | null;
  minRole?: TeamRole | null;
}): Promise<Notice> {
  const now = new Date();
  const notice: Notice = {
    key: input.key,
    title: input.title,
    body: input.body ?? null,
    published_at: (input.publishedAt ?? now).toISOString(),
    expires_at: input.expiresAt ? input.expiresAt.toISOString() : null,
    min_role: input.minRole ?? null,
    created_at: now.toISOString(),
  };
  if (!(await insertNotice({ ...notice }))) throw new NoticeKeyTakenError(`A notice with key ${notice.key} exists`);
  return notice;
}

function toNotice(item: NoticeItem): Notice {
  const { key, title, body, published_at, expires_at, min_role, created_at } = item;
  return { key, title, body: body ?? null, published_at, expires_at: expires_at ?? null, min_role: min_role ?? null, created_at };
}

/** Published, not expired, and addressed to this role or a lower one. */
export function isVisible(notice: Notice, role: TeamRole, now: Date): boolean {
  if (Date.parse(notice.published_at) > now.getTime()) return false;
  if (notice.expires_at && Date.parse(notice.expires_at) <= now.getTime()) return false;
  if (notice.min_role && roleRank[role] < roleRank[notice.min_role]) return false;
  return true;
}

/** Notices published up to now, newest first. */
async function publishedNotices(now: Date): Promise<Notice[]> {
  return (await publishedNoticeItems(now)).map(toNotice);
}

/** What the caller sees in a team, newest first, with the unread count (published after the watermark). */
export async function listVisibleNotices(userId: string, teamId: string, role: TeamRole) {
  const now = new Date();
  const [notices, dismissed, seenAt] = await Promise.all([publishedNotices(now), dismissedKeys(userId, teamId), getWatermark(userId)]);
  const visible = notices.filter((n) => isVisible(n, role, now) && !dismissed.has(n.key));
  const seenMs = seenAt ? Date.parse(seenAt) : -Infinity;
  const items = visible.map((n) => ({
    key: n.key,
    title: n.title,
    body: n.body,
    published_at: n.published_at,
    expires_at: n.expires_at,
    min_role: n.min_role,
    unread: Date.parse(n.published_at) > seenMs,
  }));
  return { notices: items, unread_count: items.filter((n) => n.unread).length, seen_at: seenAt };
}

/**
 * Moves the caller's watermark forward to `seenAt`. Monotonic by a conditional
 * update: an earlier or equal timestamp fails the condition and leaves the
 * stored one, so racing requests end at the latest of them.
 * Returns the watermark now stored.
 */
export async function markNoticesSeen(userId: string, seenAt: Date, now = new Date()): Promise<string> {
  if (seenAt.getTime() - now.getTime() > SEEN_AT_MAX_FUTURE_MS) {
    throw new ApiError(NOTICE_SEEN_AT_IN_FUTURE, {
      details: { seen_at: seenAt.toISOString(), max_future_seconds: SEEN_AT_MAX_FUTURE_MS / 1000 },
    });
  }
  // One fixed-width ISO form, so the string comparison in the condition is a time comparison.
  const value = seenAt.toISOString();
  if (await advanceWatermark(userId, value, now)) return value;
  return (await getWatermark(userId)) ?? value;
}

/**
 * Hides a notice for this person in this team. A notice the caller cannot see
 * (unknown, not yet published, expired, above their role) is 404, the same for
 * every reason. The first dismissal stands (conditional put); a repeat is a no-op.
 * Returns when the notice was dismissed.
 */
export async function dismissNotice(userId: string, teamId: string, role: TeamRole, key: string): Promise<string> {
  const now = new Date();
  const found = NOTICE_KEY_PATTERN.test(key) ? await getNoticeItem(key) : null;
  if (!found || !isVisible(toNotice(found), role, now)) throw new ApiError(NOTICE_NOT_FOUND);
  return insertDismissal(userId, teamId, key, now.toISOString());
}
