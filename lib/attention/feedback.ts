import { tryWindowTake, windowGiveBack } from '../db/rate-window-records.ts';
import { ApiError } from '../errors/api-error.ts';
import { FEEDBACK_NOT_FOUND, FEEDBACK_RATE_LIMITED } from '../errors/catalogue/admin.ts';
import { createFeedback, type Feedback, feedbackInbox, feedbackTeamId, getFeedback, markFeedbackHandledOnce } from '../privacy/records.ts';

/**
 * Feedback from signed-in users (POST /api/v1/feedback) and the admin inbox of
 * unhandled feedback. The record and its export live in lib/privacy/records.ts;
 * this module adds the cap on the message, the per-user limit, and handling.
 */

/** Longest message kept, in characters; a longer one is cut there and marked `truncated`. */
export const FEEDBACK_MESSAGE_MAX_CHARS = 5000;
/** Feedback one user may send per clock hour. */
export const FEEDBACK_PER_USER_PER_HOUR = 10;
export const FEEDBACK_TYPES = ['bug', 'idea', 'question', 'general'] as const;
export type FeedbackType = (typeof FEEDBACK_TYPES)[number];
/** The inbox shows at most this many items, oldest first. */
export const FEEDBACK_INBOX_LIMIT = 100;

const WINDOW_SECONDS = 3600;

/** Cuts at a character (code point) boundary, never inside a surrogate pair. */
export function capMessage(message: string): { message: string; truncated: boolean } {
  const chars = Array.from(message);
  if (chars.length <= FEEDBACK_MESSAGE_MAX_CHARS) return { message, truncated: false };
  return { message: chars.slice(0, FEEDBACK_MESSAGE_MAX_CHARS).join(''), truncated: true };
}

/**
 * Takes one from the user's hourly allowance: one conditional ADD on the
 * window's counter, which never overshoots whatever the concurrency. Returns
 * what gives it back (for a feedback that could not be recorded).
 */
async function takeFeedbackAllowance(userId: string, now: Date): Promise<() => Promise<void>> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const start = nowSeconds - (nowSeconds % WINDOW_SECONDS);
  const scope = `feedback:user:${userId}`;
  // The counter outlives its window by one more, long gone before anyone reads it as current.
  if (!(await tryWindowTake(scope, FEEDBACK_PER_USER_PER_HOUR, start, start + 2 * WINDOW_SECONDS))) {
    const retryAfter = Math.max(1, start + WINDOW_SECONDS - nowSeconds);
    throw new ApiError(FEEDBACK_RATE_LIMITED, {
      headers: { 'Retry-After': String(retryAfter) },
      details: { max_per_hour: FEEDBACK_PER_USER_PER_HOUR, retry_after_seconds: retryAfter },
    });
  }
  return () => windowGiveBack(scope, start).catch(() => undefined);
}

export interface FeedbackReceipt {
  id: string;
  created_at: string;
  type: string;
  message: string;
  page_route: string | null;
  truncated: boolean;
}

export async function submitFeedback(input: {
  teamId: string;
  userId: string;
  userEmail: string;
  message: string;
  type: FeedbackType;
  pageRoute: string | null;
  appVersion: string | null;
  userAgent: string | null;
  viewport: string | null;
  now?: Date;
}): Promise<FeedbackReceipt> {
  const giveBack = await takeFeedbackAllowance(input.userId, input.now ?? new Date());
  const capped = capMessage(input.message);
  let feedback: Feedback;
  try {
    feedback = await createFeedback({ ...input, message: capped.message, truncated: capped.truncated });
  } catch (error) {
    await giveBack();
    throw error;
  }
  return {
    id: feedback.id,
    created_at: feedback.created_at,
    type: feedback.type,
    message: feedback.message,
    page_route: feedback.page_route,
    truncated: feedback.truncated,
  };
}

export interface HandledFeedback {
  id: string;
  handled_at: string;
  handled_by: string;
}

/**
 * Marks feedback handled: it leaves the inbox. The first admin to mark it
 * stands; marking it again answers with that first mark and changes nothing.
 */
export async function markFeedbackHandled(feedbackId: string, adminUserId: string, now = new Date()): Promise<HandledFeedback> {
  const teamId = await feedbackTeamId(feedbackId);
  if (!teamId) throw new ApiError(FEEDBACK_NOT_FOUND);
  const marked = await markFeedbackHandledOnce(teamId, feedbackId, now.toISOString(), adminUserId);
  if (marked) return { id: feedbackId, ...marked };
  const current = await getFeedback(teamId, feedbackId);
  // The mark was refused because it is handled already (else the feedback is gone).
  if (!current?.handled_at || !current.handled_by) throw new ApiError(FEEDBACK_NOT_FOUND);
  return { id: feedbackId, handled_at: current.handled_at, handled_by: current.handled_by };
}

export interface FeedbackInboxRow {
  created_at: string;
  id: string;
  message: string;
  page_route: string | null;
  truncated: boolean;
  type: string;
  user_email: string;
}

export async function listFeedbackInbox(): Promise<FeedbackInboxRow[]> {
  return (await feedbackInbox(FEEDBACK_INBOX_LIMIT)).map((f) => ({
    created_at: f.created_at,
    id: f.id,
    message: f.message,
    page_route: f.page_route ?? null,
    truncated: f.truncated === true,
    type: f.type,
    user_email: f.user_email,
  }));
}
