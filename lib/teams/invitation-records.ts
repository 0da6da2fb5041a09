import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { isConditionalCheckFailure, refusedItem } from '../db/errors.ts';
import { TransactionRefused, transact } from '../db/transact.ts';
import { userJoinsTeam } from '../users/user-records.ts';
import { queryAll } from '../db/query.ts';
import type { Stored } from '../db/item.ts';
import type { TeamRole } from '../access/rules.ts';
import { ApiError } from '../errors/api-error.ts';
import { ALREADY_A_MEMBER, INVITATION_NOT_FOUND, INVITATION_NOT_PENDING } from '../errors/catalogue/accounts.ts';
import { newMembership } from './membership-records.ts';

/**
 * Invitations to join a team, addressed to an e-mail address: the records
 * module (keys, item shape, conditional writes). An invitation lives in its
 * team's partition and is indexed by address on gsi1, so a person's pending
 * invitations and the personal data export read it by key.
 */
export type InvitationStatus = 'pending' | 'accepted' | 'expired';

export interface Invitation {
  id: string;
  team_id: string;
  email: string;
  role: Exclude<TeamRole, 'owner'>;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  /** Who sent it (a user id); null for invitations an operator made. */
  invited_by?: string | null;
}

/** An invitation not accepted yet holds `accepted_at` as null (the export shows it so). */
const NOT_ACCEPTED = '(attribute_not_exists(accepted_at) OR attribute_type(accepted_at, :null))';

/** Invitations last a week unless told otherwise. */
const INVITATION_DAYS = 7;

export async function createInvitation(input: {
  teamId: string;
  email: string;
  role: Exclude<TeamRole, 'owner'>;
  expiresAt?: Date;
  acceptedAt?: Date | null;
  invitedBy?: string | null;
}): Promise<Invitation> {
  const now = new Date();
  const invitation: Invitation = {
    id: randomUUID(),
    team_id: input.teamId,
    email: input.email.trim().toLowerCase(),
    role: input.role,
    created_at: now.toISOString(),
    expires_at: (input.expiresAt ?? new Date(now.getTime() + INVITATION_DAYS * 86_400_000)).toISOString(),
    accepted_at: input.acceptedAt ? input.acceptedAt.toISOString() : null,
    invited_by: input.invitedBy ?? null,
  };
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        ...keys.invitation(invitation.team_id, invitation.id),
        ...keys.invitationByEmail(invitation.email, invitation.created_at, invitation.id),
        type: 'invitation',
        ...invitation,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return invitation;
}

export function invitationStatus(invitation: Invitation, now = new Date()): InvitationStatus {
  if (invitation.accepted_at) return 'accepted';
  return Date.parse(invitation.expires_at) <= now.getTime() ? 'expired' : 'pending';
}

/** An invitation's item: the invitation, in its team's partition and under its address (gsi1). */
type InvitationItem = Stored<Invitation & { type: 'invitation' }>;

const strip = (item: InvitationItem): Invitation => {
  const { pk: _pk, sk: _sk, gsi1pk: _g, gsi1sk: _s, type: _t, ...invitation } = item;
  return invitation;
};

/** Every invitation sent to an address, in every team, oldest first. */
export async function listInvitationsForEmail(email: string): Promise<Invitation[]> {
  const items = await queryAll<InvitationItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.invitationByEmail(email, '', '').gsi1pk, ':prefix': 'INVITATION#' },
  });
  return items.map(strip);
}

/** A team's invitations, oldest first. */
export async function listTeamInvitations(teamId: string): Promise<Invitation[]> {
  const items = await queryAll<InvitationItem>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.team(teamId).pk, ':prefix': 'INVITATION#' },
  });
  return items.map(strip).sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/** Takes back an invitation nobody accepted yet; 404 when the team has none of that id, 409 once accepted. */
export async function revokeInvitation(teamId: string, invitationId: string): Promise<void> {
  try {
    await dynamo().send(
      new DeleteCommand({
        TableName: config.tableName(),
        Key: keys.invitation(teamId, invitationId),
        ConditionExpression: `attribute_exists(pk) AND ${NOT_ACCEPTED}`,
        ExpressionAttributeValues: { ':null': 'NULL' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    throw new ApiError(refusedItem<Invitation>(error) ? INVITATION_NOT_PENDING : INVITATION_NOT_FOUND);
  }
}

/**
 * Accepts an invitation for the signed-in person whose address it was sent
 * to (the caller looked it up by that address): one transaction marks it accepted (only while pending), adds the
 * membership (only if not a member yet) and makes the team the person's
 * default when they have none, so two racing accepts add one membership.
 */
export async function acceptInvitation(invitation: Invitation, user: { user_id: string; email: string }): Promise<void> {
  const now = new Date().toISOString();
  try {
    await transact([
      {
        name: 'invitation',
        write: {
          Update: {
            Key: keys.invitation(invitation.team_id, invitation.id),
            UpdateExpression: 'SET accepted_at = :now',
            ConditionExpression: `attribute_exists(pk) AND ${NOT_ACCEPTED} AND expires_at > :now`,
            ExpressionAttributeValues: { ':now': now, ':null': 'NULL' },
          },
        },
      },
      newMembership(invitation.team_id, user.user_id, invitation.role, now),
      userJoinsTeam(user.user_id, invitation.team_id),
    ]);
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    if (error.failed.has('membership') && !error.failed.has('invitation')) throw new ApiError(ALREADY_A_MEMBER);
    throw new ApiError(INVITATION_NOT_PENDING);
  }
}
