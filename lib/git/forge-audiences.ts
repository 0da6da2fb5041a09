import { createHash } from 'node:crypto';
import { config } from '../config.ts';
import { getItem, type Stored } from '../db/item.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { type NamedWrite, transact, TransactionRefused } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { FORGE_AUDIENCE_NOT_FOUND, FORGE_AUDIENCE_NOT_REGISTERED, FORGE_AUDIENCE_TAKEN } from '../errors/catalogue/builds.ts';
import * as z from '../schema.ts';

/**
 * Forge audiences (docs/builds.md, "Forge tokens"): the `aud` values a team's
 * projects may mint forge tokens for. A team admin registers one
 * (`POST /api/v1/team/forge-audiences`); the claim is platform-wide and made
 * by a conditional write (a `FORGEAUDIENCE#{sha256}` item holding the team),
 * so of two teams claiming one audience, even at once, one gets it and the
 * other answers 409 FORGE_AUDIENCE_TAKEN. A project naming an audience (create
 * or PATCH) checks the claim in its own transaction (400
 * FORGE_AUDIENCE_NOT_REGISTERED), and the builds worker checks it again
 * before it mints a token, so an audience released and claimed by another
 * team is never minted for the first one.
 */
export interface ForgeAudience {
  id: string;
  audience: string;
  created_at: string;
  created_by: string | null;
}

/** An audience as a token carries it: any text without control characters or spaces at its ends, 1 to 1024 characters. */
export const forgeAudienceValue = z.string().check(
  z.minLength(1),
  z.maxLength(1024),
  z.refine((value) => value.trim() === value && !/[\u0000-\u001f\u007f]/.test(value), {
    message: 'An audience has no control characters and no spaces at its ends.',
  }),
);

/** The audience's id: the SHA-256 of its exact text, hex (audiences are compared exactly, as forges compare `aud`). */
export const forgeAudienceId = (audience: string) => createHash('sha256').update(audience, 'utf8').digest('hex');

/** What the claim (`forge_audience`) and the team's listing item (`team_forge_audience`) both hold. */
interface AudienceFields {
  audience_id: string;
  audience: string;
  team_id: string;
  created_at: string;
  /** Absent on items from before it was recorded. */
  created_by?: string | null;
}

const view = (item: AudienceFields): ForgeAudience => ({
  id: item.audience_id,
  audience: item.audience,
  created_at: item.created_at,
  created_by: item.created_by ?? null,
});

function claimOf(audience: string): Promise<Stored<AudienceFields & { type: 'forge_audience' }> | null> {
  return getItem(keys.forgeAudience(forgeAudienceId(audience)), true);
}

/** The team an audience is registered to, or null. */
export async function forgeAudienceTeam(audience: string): Promise<string | null> {
  return (await claimOf(audience))?.team_id ?? null;
}

/**
 * Registers an audience to a team: the claim and the team's listing item in one transaction, the claim
 * on the condition that no team holds it. The team's own audience again: `created` false, nothing written.
 */
export async function registerForgeAudience(
  teamId: string,
  audience: string,
  createdBy: string | null,
): Promise<{ created: boolean; audience: ForgeAudience }> {
  const id = forgeAudienceId(audience);
  const item: AudienceFields = { audience_id: id, audience, team_id: teamId, created_at: new Date().toISOString(), created_by: createdBy };
  for (let attempt = 0; ; attempt++) {
    try {
      await transact([
        {
          name: 'claim',
          write: {
            Put: {
              Item: { ...keys.forgeAudience(id), type: 'forge_audience', ...item },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        },
        { name: 'listing', write: { Put: { Item: { ...keys.teamForgeAudience(teamId, id), type: 'team_forge_audience', ...item } } } },
      ]);
      return { created: true, audience: view(item) };
    } catch (error) {
      if (!(error instanceof TransactionRefused)) throw error;
      // Cancelled by a racing claim of the same audience (DynamoDB's TransactionConflict): the claim decides on a retry.
      if (!error.failed.has('claim') && error.conflicted && attempt < 5) continue;
      if (!error.failed.has('claim')) throw error;
      const claim = await claimOf(audience);
      if (claim?.team_id === teamId) return { created: false, audience: view(claim) };
      throw new ApiError(FORGE_AUDIENCE_TAKEN, { details: { audience } });
    }
  }
}

/** The team's audiences, oldest first. */
export async function listForgeAudiences(teamId: string): Promise<ForgeAudience[]> {
  const items = await queryAll<Stored<AudienceFields & { type: 'team_forge_audience' }>>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.team(teamId).pk, ':prefix': 'FORGEAUDIENCE#' },
    ConsistentRead: true,
  });
  return items.map(view).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.audience.localeCompare(b.audience));
}

/**
 * Releases a team's audience: the claim (on the condition that it is still this team's) and the listing
 * item together. Projects that name it stop getting tokens for it at their next build.
 */
export async function releaseForgeAudience(teamId: string, audience: string): Promise<ForgeAudience> {
  const id = forgeAudienceId(audience);
  const claim = await claimOf(audience);
  if (claim?.team_id !== teamId) throw new ApiError(FORGE_AUDIENCE_NOT_FOUND, { details: { audience } });
  await transact([
    {
      name: 'claim',
      write: {
        Delete: {
          Key: keys.forgeAudience(id),
          ConditionExpression: 'team_id = :team',
          ExpressionAttributeValues: { ':team': teamId },
        },
      },
      refusal: () => new ApiError(FORGE_AUDIENCE_NOT_FOUND, { details: { audience } }),
    },
    { name: 'listing', write: { Delete: { Key: keys.teamForgeAudience(teamId, id) } } },
  ]);
  return view(claim);
}

/**
 * The condition a project's save adds when it names an audience: the claim is the team's, checked in the
 * save's own transaction (a release racing the save cannot slip between a read and the write).
 */
export function forgeAudienceRegistered(teamId: string, audience: string): NamedWrite {
  return {
    name: 'forge_audience',
    write: {
      ConditionCheck: {
        Key: keys.forgeAudience(forgeAudienceId(audience)),
        ConditionExpression: 'team_id = :forgeTeam',
        ExpressionAttributeValues: { ':forgeTeam': teamId },
      },
    },
    refusal: () => new ApiError(FORGE_AUDIENCE_NOT_REGISTERED, { details: { forge_audience: audience } }),
  };
}

/** The condition writes of a save whose body carries `forge_audience` (none when it names no audience). */
export function forgeAudienceWrites(teamId: string, audience: string | null | undefined): NamedWrite[] {
  return typeof audience === 'string' && audience !== '' ? [forgeAudienceRegistered(teamId, audience)] : [];
}
