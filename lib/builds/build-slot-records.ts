import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';

/**
 * The per-team build concurrency cap: a team's running builds are entries of
 * one item (deployment id -> expiry epoch), taken with an optimistic version
 * so racing workers cannot exceed the cap. An entry expires on its own after
 * the build's budget and a margin, so a build lost with its worker frees its
 * place.
 */
const ATTEMPTS = 20;

async function readSlots(teamId: string): Promise<{ version: number | null; live: Record<string, number> }> {
  const item = (
    await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamBuildSlots(teamId), ConsistentRead: true }))
  ).Item;
  const now = epochSeconds(new Date());
  const live = Object.fromEntries(Object.entries((item?.slots ?? {}) as Record<string, number>).filter(([, expires]) => expires > now));
  return { version: (item?.version as number | undefined) ?? null, live };
}

/** Takes a place for the build; false when the team already runs `cap` builds. Taking it again is a no-op. */
export async function acquireBuildSlot(teamId: string, deploymentId: string, cap: number, holdSeconds: number): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const slots = await readSlots(teamId);
    if (slots.live[deploymentId]) return true;
    if (Object.keys(slots.live).length >= cap) return false;
    try {
      await dynamo().send(
        new PutCommand({
          TableName: config.tableName(),
          Item: {
            ...keys.teamBuildSlots(teamId),
            type: 'build_slots',
            slots: { ...slots.live, [deploymentId]: epochSeconds(new Date()) + holdSeconds },
            version: (slots.version ?? 0) + 1,
          },
          ConditionExpression: slots.version === null ? 'attribute_not_exists(pk)' : 'version = :v',
          ExpressionAttributeValues: slots.version === null ? undefined : { ':v': slots.version },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
    }
  }
  return false;
}

export async function releaseBuildSlot(teamId: string, deploymentId: string): Promise<void> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.teamBuildSlots(teamId),
        UpdateExpression: 'REMOVE slots.#build SET version = version + :one',
        ConditionExpression: 'attribute_exists(slots.#build)',
        ExpressionAttributeNames: { '#build': deploymentId },
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
  }
}
