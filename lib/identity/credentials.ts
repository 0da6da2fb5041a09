import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll } from '../db/batch.ts';
import { queryAll } from '../db/query.ts';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import type { TeamRole } from '../http/access.ts';
import { hashToken, newToken, tokenKind } from './tokens.ts';

/** Sessions last 30 days; API keys until revoked. */
const SESSION_DAYS = 30;

export interface CredentialRecord {
  kind: 'session' | 'api_key';
  user_id: string | null;
  /** The API key's team, or the team a session was opened for. */
  team_id: string | null;
  /** The role an API key acts with in its team. */
  role: Exclude<TeamRole, 'owner'> | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

/** The index keys of a credential scoped to a team, so the team's purge finds it. */
const teamScope = (teamId: string | null, tokenHash: string) => (teamId ? keys.tokenOfTeam(teamId, tokenHash) : {});

export async function createSession(userId: string, teamId: string | null = null): Promise<string> {
  const token = newToken('session');
  const now = new Date();
  const expires = new Date(now.getTime() + SESSION_DAYS * 86_400_000);
  const record: CredentialRecord = {
    kind: 'session',
    user_id: userId,
    team_id: teamId,
    role: null,
    created_at: now.toISOString(),
    expires_at: expires.toISOString(),
    revoked_at: null,
  };
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: { ...keys.token(hashToken(token)), ...teamScope(teamId, hashToken(token)), type: 'credential', ...record, ttl: epochSeconds(expires) },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return token;
}

export async function createApiKey(teamId: string, role: Exclude<TeamRole, 'owner'> = 'admin'): Promise<string> {
  const token = newToken('api_key');
  const record: CredentialRecord = {
    kind: 'api_key',
    user_id: null,
    team_id: teamId,
    role,
    created_at: new Date().toISOString(),
    expires_at: null,
    revoked_at: null,
  };
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: { ...keys.token(hashToken(token)), ...teamScope(teamId, hashToken(token)), type: 'credential', ...record },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return token;
}

export async function revokeCredential(token: string): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.token(hashToken(token)),
      UpdateExpression: 'SET revoked_at = :now',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':now': new Date().toISOString() },
    }),
  );
}

/** The live credential record of a token, or null when malformed, unknown, expired or revoked. */
export async function lookupCredential(token: string): Promise<CredentialRecord | null> {
  const kind = tokenKind(token);
  if (!kind) return null;
  const result = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.token(hashToken(token)) }),
  );
  const record = result.Item as CredentialRecord | undefined;
  if (!record || record.kind !== kind) return null;
  if (record.revoked_at) return null;
  if (record.expires_at && Date.parse(record.expires_at) <= Date.now()) return null;
  return record;
}

/**
 * Deletes every credential scoped to a team: its API keys and the sessions opened for it (a team's purge).
 * Returns how many. A credential created before credentials carried the team's index key is not found here;
 * authorization refuses an API key whose team is gone (lib/http/authorize.ts) all the same.
 */
export async function deleteTeamCredentials(teamId: string): Promise<number> {
  const found = await queryAll({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.tokenOfTeam(teamId, '').gsi1pk },
    ProjectionExpression: 'pk, sk',
  });
  await batchWriteAll(found.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
  return found.length;
}
