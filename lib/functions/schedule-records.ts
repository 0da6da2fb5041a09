import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';

/**
 * One item per scheduled function of a project (`PROJECT#{id}` / `FNSCHEDULE#{name}`), gone with the project's
 * partition. `schedule` is the expression of the Scheduler schedule made for it (absent once that is deleted):
 * the item says so before the schedule is made and after it is deleted, so it never names fewer schedules than
 * exist. The tick state beside it: the scheduled time of the last tick taken, the scheduled invocation that tick
 * started, and how many ticks were skipped because the previous run was still pending or running.
 */
export interface FunctionScheduleItem {
  name: string;
  schedule?: string;
  last_tick_at?: string;
  open_invocation_id?: string;
  skipped_runs?: number;
  last_skipped_at?: string;
}

const table = () => config.tableName();

/** Every schedule item of a project (expression or tick state). */
export async function listFunctionScheduleItems(projectId: string): Promise<FunctionScheduleItem[]> {
  const prefix = keys.functionSchedulePrefix(projectId);
  const items = await queryAll({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': prefix.pk, ':prefix': prefix.skPrefix },
    ConsistentRead: true,
  });
  return items as unknown as FunctionScheduleItem[];
}

export async function getFunctionScheduleItem(projectId: string, name: string): Promise<FunctionScheduleItem | null> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: table(), Key: keys.functionSchedule(projectId, name), ConsistentRead: true }),
  );
  return (reply.Item as FunctionScheduleItem | undefined) ?? null;
}

/** Records that a schedule with this expression is (about to be) made for the function. */
export async function recordScheduleMade(projectId: string, name: string, schedule: string): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: table(),
      Key: keys.functionSchedule(projectId, name),
      UpdateExpression: 'SET #name = :name, schedule = :schedule',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: { ':name': name, ':schedule': schedule },
    }),
  );
}

/** Records that the function's schedule was deleted, unless another writer recorded a schedule since it was read. */
export async function recordScheduleDeleted(projectId: string, name: string, schedule: string): Promise<void> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: table(),
        Key: keys.functionSchedule(projectId, name),
        UpdateExpression: 'REMOVE schedule',
        ConditionExpression: 'schedule = :schedule',
        ExpressionAttributeValues: { ':schedule': schedule },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
  }
}

const tickIsNewer = '(attribute_not_exists(last_tick_at) OR last_tick_at < :tick)';
const openIs = (previous: string | undefined) =>
  previous === undefined ? 'attribute_not_exists(open_invocation_id)' : 'open_invocation_id = :previous';

/**
 * Takes the tick at `tickAt` for a new run `invocationId`: only if no later or equal tick was taken and the open
 * run is still the one the caller read (`previous`), as one conditional write. False when another tick (or a
 * redelivery of this one) got there first: the caller reads again.
 */
export async function takeScheduledTick(
  projectId: string,
  name: string,
  tickAt: string,
  previous: string | undefined,
  invocationId: string,
): Promise<boolean> {
  return conditional({
    TableName: table(),
    Key: keys.functionSchedule(projectId, name),
    UpdateExpression: 'SET #name = :name, last_tick_at = :tick, open_invocation_id = :id',
    ConditionExpression: `${tickIsNewer} AND ${openIs(previous)}`,
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: { ':name': name, ':tick': tickAt, ':id': invocationId, ...(previous ? { ':previous': previous } : {}) },
  });
}

/**
 * Counts the tick at `tickAt` as skipped while the run `open` is pending or running: only if no later or equal
 * tick was taken and `open` is still the open run. False when another writer got there first.
 */
export async function skipScheduledTick(projectId: string, name: string, tickAt: string, open: string): Promise<boolean> {
  return conditional({
    TableName: table(),
    Key: keys.functionSchedule(projectId, name),
    UpdateExpression: 'SET last_tick_at = :tick, last_skipped_at = :tick ADD skipped_runs :one',
    ConditionExpression: `${tickIsNewer} AND ${openIs(open)}`,
    ExpressionAttributeValues: { ':tick': tickAt, ':previous': open, ':one': 1 },
  });
}

async function conditional(input: ConstructorParameters<typeof UpdateCommand>[0]): Promise<boolean> {
  try {
    await dynamo().send(new UpdateCommand(input));
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}
