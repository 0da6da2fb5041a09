import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { getItem, type Stored } from '../db/item.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { transact } from '../db/transact.ts';

/**
 * Records that identify a person, beyond the user row and memberships: what
 * the personal data export reads. Team-owned records (invitations, feedback)
 * live in the team's partition and are indexed by person on gsi1; records of
 * the person alone live in the user's partition. Both are read by key
 * queries, never scans.
 */

// Invitations are team records of their own (lib/teams/invitation-records.ts); the export reads them from there.
export {
  createInvitation,
  invitationStatus,
  listInvitationsForEmail,
  type Invitation,
  type InvitationStatus,
} from '../teams/invitation-records.ts';

export type EmailChangeStatus = 'pending' | 'expired' | 'confirmed' | 'frozen';

export interface Feedback {
  id: string;
  team_id: string;
  user_id: string;
  user_email: string;
  type: string;
  message: string;
  page_route: string | null;
  app_version: string | null;
  user_agent: string | null;
  viewport: string | null;
  created_at: string;
  /** The message was longer than the cap and was cut (lib/attention/feedback.ts). */
  truncated: boolean;
  /** Set once a platform admin marks it handled; until then it is in the admin feedback inbox. */
  handled_at: string | null;
  handled_by: string | null;
}

export interface EmailChange {
  id: string;
  user_id: string;
  old_email: string;
  new_email: string;
  status: EmailChangeStatus;
  attempts: number;
  created_at: string;
  expires_at: string;
  confirmed_at: string | null;
  frozen_at: string | null;
  freeze_link_expires_at: string | null;
  request_ip: string | null;
  request_user_agent: string | null;
}

export interface CredentialCutoff {
  user_id: string;
  reason: string;
  /** Credentials issued before this instant are refused. */
  not_before: string;
  updated_at: string;
}

export interface StepUpGrant {
  id: string;
  user_id: string;
  factors: string[];
  created_at: string;
  expires_at: string;
}

/** An e-mail change link works for a day; the old address's freeze link for a week. */
const EMAIL_CHANGE_HOURS = 24;
const FREEZE_LINK_DAYS = 7;
const STEP_UP_MINUTES = 15;

/** A person's record with its key and kind, written once (the condition refuses a second write under the key). */
async function put(item: Stored<{ type: string } & (EmailChange | (StepUpGrant & { ttl: number }))>): Promise<void> {
  await dynamo().send(new PutCommand({ TableName: config.tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
}

export async function createFeedback(input: {
  teamId: string;
  userId: string;
  userEmail: string;
  message: string;
  type?: string;
  pageRoute?: string | null;
  appVersion?: string | null;
  userAgent?: string | null;
  viewport?: string | null;
  truncated?: boolean;
}): Promise<Feedback> {
  const feedback: Feedback = {
    id: randomUUID(),
    team_id: input.teamId,
    user_id: input.userId,
    user_email: input.userEmail,
    type: input.type ?? 'general',
    message: input.message,
    page_route: input.pageRoute ?? null,
    app_version: input.appVersion ?? null,
    user_agent: input.userAgent ?? null,
    viewport: input.viewport ?? null,
    created_at: new Date().toISOString(),
    truncated: input.truncated ?? false,
    handled_at: null,
    handled_by: null,
  };
  // The feedback, in the admin inbox until handled, and its reference by id, together.
  await transact([
    {
      name: 'feedback',
      write: {
        Put: {
          Item: {
            ...keys.feedback(feedback.team_id, feedback.id),
            ...keys.feedbackByUser(feedback.user_id, feedback.created_at, feedback.id),
            ...keys.feedbackInbox(feedback.created_at, feedback.id),
            // `type` is the feedback's own field (bug, idea ...), so the item kind goes under another name.
            item_type: 'feedback',
            ...feedback,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    },
    {
      name: 'ref',
      write: {
        Put: {
          Item: { ...keys.feedbackRef(feedback.id), item_type: 'feedback_ref', team_id: feedback.team_id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    },
  ]);
  return feedback;
}

/** The team whose partition holds the feedback with this id (its reference by id), or null. */
export async function feedbackTeamId(feedbackId: string): Promise<string | null> {
  const ref = await getItem<FeedbackRef>(keys.feedbackRef(feedbackId));
  return ref ? ref.team_id : null;
}

/** The feedback's reference by id: where (which team's partition) the feedback lives. */
type FeedbackRef = { item_type: 'feedback_ref'; team_id: string };

export interface FeedbackHandling {
  handled_at: string;
  handled_by: string;
}

/**
 * Marks the feedback handled, taking it out of the inbox, unless it is handled already (or gone): then
 * null, and nothing changes (the first mark stands).
 */
export async function markFeedbackHandledOnce(
  teamId: string,
  feedbackId: string,
  at: string,
  by: string,
): Promise<FeedbackHandling | null> {
  try {
    const reply = await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.feedback(teamId, feedbackId),
        UpdateExpression: 'SET handled_at = :now, handled_by = :admin REMOVE gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(handled_at) OR handled_at = :null)',
        ExpressionAttributeValues: { ':now': at, ':admin': by, ':null': null },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const handled = reply.Attributes as Feedback & FeedbackHandling;
    return { handled_at: handled.handled_at, handled_by: handled.handled_by };
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    return null;
  }
}

/** The feedback item, read consistently, or null. */
export async function getFeedback(teamId: string, feedbackId: string): Promise<Feedback | null> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.feedback(teamId, feedbackId), ConsistentRead: true }),
  );
  return (reply.Item as Feedback | undefined) ?? null;
}

/** The admin inbox: unhandled feedback, oldest first, at most `limit`. */
export async function feedbackInbox(limit: number): Promise<Feedback[]> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :inbox',
      ExpressionAttributeValues: { ':inbox': keys.feedbackInbox('', '').gsi2pk },
      Limit: limit,
    }),
  );
  return (reply.Items ?? []) as Feedback[];
}

export async function createEmailChange(input: {
  userId: string;
  oldEmail: string;
  newEmail: string;
  status?: EmailChangeStatus;
  attempts?: number;
  expiresAt?: Date;
  requestIp?: string | null;
  requestUserAgent?: string | null;
}): Promise<EmailChange> {
  const now = new Date();
  const nowIso = now.toISOString();
  const status = input.status ?? 'pending';
  const change: EmailChange = {
    id: randomUUID(),
    user_id: input.userId,
    old_email: input.oldEmail.trim().toLowerCase(),
    new_email: input.newEmail.trim().toLowerCase(),
    status,
    attempts: input.attempts ?? 0,
    created_at: nowIso,
    expires_at: (input.expiresAt ?? new Date(now.getTime() + EMAIL_CHANGE_HOURS * 3_600_000)).toISOString(),
    confirmed_at: status === 'confirmed' ? nowIso : null,
    frozen_at: status === 'frozen' ? nowIso : null,
    freeze_link_expires_at: new Date(now.getTime() + FREEZE_LINK_DAYS * 86_400_000).toISOString(),
    request_ip: input.requestIp ?? null,
    request_user_agent: input.requestUserAgent ?? null,
  };
  await put({ ...keys.emailChange(change.user_id, change.created_at, change.id), type: 'email_change', ...change });
  return change;
}

/** One cut-off per reason; setting it again moves `not_before` (an upsert, not a second record). */
export async function setCredentialCutoff(input: { userId: string; reason: string; notBefore?: Date }): Promise<CredentialCutoff> {
  const now = new Date();
  const cutoff: CredentialCutoff = {
    user_id: input.userId,
    reason: input.reason,
    not_before: (input.notBefore ?? now).toISOString(),
    updated_at: now.toISOString(),
  };
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: { ...keys.credentialCutoff(cutoff.user_id, cutoff.reason), type: 'credential_cutoff', ...cutoff },
    }),
  );
  return cutoff;
}

export async function createStepUpGrant(input: { userId: string; factors: string[]; minutes?: number }): Promise<StepUpGrant> {
  const now = new Date();
  const expires = new Date(now.getTime() + (input.minutes ?? STEP_UP_MINUTES) * 60_000);
  const grant: StepUpGrant = {
    id: randomUUID(),
    user_id: input.userId,
    factors: input.factors,
    created_at: now.toISOString(),
    expires_at: expires.toISOString(),
  };
  // Kept a day past expiry so recent grants still show in an export, then TTL removes them.
  await put({
    ...keys.stepUpGrant(grant.user_id, grant.created_at, grant.id),
    type: 'step_up_grant',
    ...grant,
    ttl: epochSeconds(expires) + 86_400,
  });
  return grant;
}

const userPartition = <T extends object>(userId: string, prefix: string) =>
  queryAll<T>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.user(userId).pk, ':prefix': prefix },
  });

const byIndex = <T extends object>(gsi1pk: string, prefix: string) =>
  queryAll<T>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :prefix)',
    ExpressionAttributeValues: { ':pk': gsi1pk, ':prefix': prefix },
  });

export const listFeedbackOfUser = (userId: string) => byIndex<Feedback>(keys.user(userId).pk, 'FEEDBACK#');
export const listEmailChanges = (userId: string) => userPartition<EmailChange>(userId, 'EMAIL_CHANGE#');
export const listCredentialCutoffs = (userId: string) => userPartition<CredentialCutoff>(userId, 'CREDENTIAL_CUTOFF#');
export const listStepUpGrants = (userId: string) => userPartition<StepUpGrant>(userId, 'STEP_UP_GRANT#');
