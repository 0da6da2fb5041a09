import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll } from '../db/batch.ts';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { queryAll } from '../db/query.ts';
import type { Stored, TableKey } from '../db/item.ts';
import type { TeamRole } from '../access/rules.ts';
import { hashToken, newToken, tokenKind } from './tokens.ts';

/**
 * The records of credentials: one item per token, keyed by the SHA-256 of the token (never the token),
 * for sessions and API keys alike; a team's API keys and the sessions opened for it are indexed by team.
 */

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

/** The index keys of a session opened for a team, so the team's purge finds it. */
const sessionScope = (teamId: string | null, tokenHash: string) => (teamId ? keys.sessionByTeam(teamId, tokenHash) : {});

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
      Item: {
        ...keys.token(hashToken(token)),
        ...sessionScope(teamId, hashToken(token)),
        type: 'credential',
        ...record,
        ttl: epochSeconds(expires),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return token;
}

/** What a team's listing shows of an API key: never its token, which is shown once, when it is made. */
export interface ApiKeySummary {
  id: string;
  name: string;
  role: Exclude<TeamRole, 'owner'>;
  /** The token's first characters, so a person can tell keys apart. */
  prefix: string;
  created_at: string;
  created_by: string | null;
  revoked_at: string | null;
}

/** Characters of a token shown in listings: the kind prefix and four random characters. */
const SHOWN_PREFIX_LENGTH = 10;

/** An API key's token (what the operator command and tests hand out). */
export async function createApiKey(teamId: string, role: Exclude<TeamRole, 'owner'> = 'admin'): Promise<string> {
  return (await issueApiKey(teamId, role)).token;
}

/** Makes an API key of a team: its token, to be shown once, and what the team's listing shows of it. */
export async function issueApiKey(
  teamId: string,
  role: Exclude<TeamRole, 'owner'> = 'admin',
  options: { name?: string; createdBy?: string | null } = {},
): Promise<{ token: string; key: ApiKeySummary }> {
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
  const key: ApiKeySummary = {
    id: randomUUID(),
    name: options.name ?? 'API key',
    role,
    prefix: token.slice(0, SHOWN_PREFIX_LENGTH),
    created_at: record.created_at,
    created_by: options.createdBy ?? null,
    revoked_at: null,
  };
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: { ...keys.token(hashToken(token)), ...keys.apiKeyByTeam(teamId, key.id), type: 'credential', ...record, ...key },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { token, key };
}

/** An API key's credential item, as createApiKey writes it (the summary's fields among the credential's). */
type ApiKeyItem = Stored<
  Omit<ApiKeySummary, 'created_by' | 'revoked_at'> & {
    type: 'credential';
    team_id: string;
    /** Absent on keys from before they were recorded. */
    created_by?: string | null;
    revoked_at?: string | null;
  }
>;

const summaryOf = (item: ApiKeyItem): ApiKeySummary => ({
  id: item.id,
  name: item.name,
  role: item.role,
  prefix: item.prefix,
  created_at: item.created_at,
  created_by: item.created_by ?? null,
  revoked_at: item.revoked_at ?? null,
});

/** A team's API keys, oldest first, revoked ones included (with `revoked_at`). */
export async function listApiKeys(teamId: string): Promise<ApiKeySummary[]> {
  const items = await queryAll<ApiKeyItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :key)',
    ExpressionAttributeValues: { ':pk': keys.apiKeyByTeam(teamId, '').gsi1pk, ':key': 'APIKEY#' },
  });
  return items.map(summaryOf).sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/**
 * Revokes one of a team's API keys; null when the team has no key of that id.
 * Revoking twice keeps the first `revoked_at`.
 */
export async function revokeApiKey(teamId: string, keyId: string): Promise<ApiKeySummary | null> {
  const found = await queryAll<ApiKeyItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
    ExpressionAttributeValues: { ':pk': keys.apiKeyByTeam(teamId, keyId).gsi1pk, ':sk': keys.apiKeyByTeam(teamId, keyId).gsi1sk },
  });
  const item = found[0];
  if (!item) return null;
  try {
    const reply = await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET revoked_at = :now',
        // A live key holds revoked_at as null.
        ConditionExpression:
          'attribute_exists(pk) AND team_id = :team AND (attribute_not_exists(revoked_at) OR attribute_type(revoked_at, :null))',
        ExpressionAttributeValues: { ':now': new Date().toISOString(), ':team': teamId, ':null': 'NULL' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    // ALL_NEW: the key's whole item, revoked now.
    return summaryOf(reply.Attributes as ApiKeyItem);
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    return summaryOf(item);
  }
}

export async function revokeCredential(token: string): Promise<void> {
  await revokeCredentialByHash(hashToken(token));
}

/** Revokes the credential whose token hashes to this (sign-out knows only the hash). */
export async function revokeCredentialByHash(tokenHash: string): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.token(tokenHash),
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
  const result = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.token(hashToken(token)) }));
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
  const found = await queryAll<TableKey>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.apiKeyByTeam(teamId, '').gsi1pk },
    ProjectionExpression: 'pk, sk',
  });
  await batchWriteAll(found.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
  return found.length;
}
