import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import type { GEO_MODES } from './domains.ts';
import type { DomainItem } from './records.ts';

/**
 * The geo policy fields of a domain item: the saved policy with its `geo_revision` (bumped on each save),
 * and which revision the distribution holds (`geo_applied_revision`). Each write is conditional on the
 * revision and distribution it read, so an older round never records itself over a newer policy.
 */

export type GeoMode = (typeof GEO_MODES)[number];

export interface GeoPolicy {
  geo_mode: GeoMode;
  geo_countries: string[];
}

/** One conditional update of a domain's geo fields; its attributes after, or null when the condition failed. */
async function updateGeo(domainId: string, update: Omit<UpdateCommandInput, 'TableName' | 'Key'>) {
  try {
    const reply = await dynamo().send(new UpdateCommand({ TableName: config.tableName(), Key: keys.domain(domainId), ...update }));
    return (reply.Attributes ?? {}) as DomainItem;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return null;
    throw error;
  }
}

/** Saves the policy on a live domain with its own distribution and bumps `geo_revision`; null when it is not one. */
export function writeGeoPolicy(domainId: string, policy: GeoPolicy, now: Date) {
  return updateGeo(domainId, {
    UpdateExpression: 'SET geo_mode = :mode, geo_countries = :countries, updated_at = :now ADD geo_revision :one',
    ConditionExpression: 'attribute_exists(pk) AND attribute_type(deleted_at, :null) AND attribute_type(distribution_id, :string)',
    ExpressionAttributeValues: {
      ':mode': policy.geo_mode,
      ':countries': policy.geo_countries,
      ':now': now.toISOString(),
      ':one': 1,
      ':null': 'NULL',
      ':string': 'S',
    },
    ReturnValues: 'ALL_NEW',
  });
}

/** Records that the distribution holds `revision`; null when a newer policy was saved (or the domain moved on). */
export function recordGeoApplied(domainId: string, revision: unknown, distributionId: unknown) {
  return updateGeo(domainId, {
    UpdateExpression: 'SET geo_applied_revision = :revision, geo_applied_at = :now',
    ConditionExpression: 'geo_revision = :revision AND distribution_id = :distribution AND attribute_type(deleted_at, :null)',
    ExpressionAttributeValues: {
      ':revision': revision,
      ':now': new Date().toISOString(),
      ':distribution': distributionId,
      ':null': 'NULL',
    },
    ReturnValues: 'ALL_NEW',
  });
}

/** No revision is recorded as applied (a round wrote an older policy, or the distribution is new). */
export async function forgetGeoApplied(domainId: string, onDistribution?: unknown): Promise<boolean> {
  const moved = await updateGeo(domainId, {
    UpdateExpression: 'SET geo_applied_revision = :none, geo_applied_at = :none',
    ConditionExpression: onDistribution === undefined ? 'attribute_exists(pk)' : 'distribution_id = :distribution',
    ExpressionAttributeValues: { ':none': null, ...(onDistribution === undefined ? {} : { ':distribution': onDistribution }) },
  });
  return moved !== null;
}
