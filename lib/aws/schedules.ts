import { randomUUID } from 'node:crypto';
import { config } from '../config.ts';
import { signedCall, signer } from './signer.ts';

/**
 * EventBridge Scheduler schedules in the platform's group: one-time ones, each
 * invoking a schedule worker of lib/workers.ts (named by the variable that
 * holds its ARN) with a JSON input, and the recurring ones of scheduled
 * functions (lib/functions/schedules.ts), which send to the invocations queue.
 * The receiver re-checks its records, so a stale or early firing changes
 * nothing that should stay.
 *
 * The three calls are signed `fetch` calls in Scheduler's REST-JSON protocol
 * (what the SDK's client speaks too): the client and its protocol code were
 * about 30 KB of each bundle that publishes or deletes (finalize among them).
 * Errors carry Scheduler's error type as `name`, as the SDK's do (signedCall).
 */

export function atExpression(when: Date): string {
  // Rounded up to the next second: the schedule may fire late, never before `when`.
  const seconds = new Date(Math.ceil(when.getTime() / 1000) * 1000);
  return `at(${seconds.toISOString().slice(0, 19)})`;
}

async function schedulerCall(method: 'POST' | 'PUT' | 'DELETE', name: string, body?: object): Promise<void> {
  const endpoint = config.awsEndpoint()?.replace(/\/+$/, '') ?? `https://scheduler.${config.awsRegion()}.amazonaws.com`;
  const query = method === 'DELETE' ? `?groupName=${encodeURIComponent(config.scheduleGroup())}` : '';
  const init = body ? { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : { method };
  await signedCall(signer('scheduler'), `${endpoint}/schedules/${encodeURIComponent(name)}${query}`, init, ({ res, text, body: error }) => {
    // REST-JSON names the error in X-Amzn-ErrorType ("Name:uri"); some servers only in the body.
    const type = res.headers.get('x-amzn-errortype') ?? String(error.__type ?? error.code ?? `Http${res.status}`);
    return { name: type.split(':')[0]!.split('#').pop()!, message: String(error.Message ?? error.message ?? text.slice(0, 200)) };
  });
}

const isNamed = (error: unknown, name: string) => (error as Error).name === name;

/** Creates the schedule `name`, or moves an existing one to `at` with this input. */
export async function setOneTimeSchedule(name: string, at: Date, targetArnEnv: string, input: unknown): Promise<void> {
  const targetArn = config.scheduleTargetArn(targetArnEnv);
  if (!targetArn) throw new Error(`Configuration variable ${targetArnEnv} is not set`);
  await putSchedule(name, {
    ScheduleExpression: atExpression(at),
    Target: { Arn: targetArn, RoleArn: config.schedulerRoleArn(), Input: JSON.stringify(input) },
    // UpdateSchedule replaces every field, so this is repeated there.
    ActionAfterCompletion: 'DELETE',
  });
}

/**
 * Creates the recurring schedule `name` (a `cron(...)` in UTC), or replaces an existing one's expression and
 * target. `input` is the target's text as sent; Scheduler fills in its context attributes
 * (`<aws.scheduler.scheduled-time>`) at each firing.
 */
export async function setRecurringSchedule(name: string, expression: string, targetArn: string, input: string): Promise<void> {
  await putSchedule(name, { ScheduleExpression: expression, Target: { Arn: targetArn, RoleArn: config.schedulerRoleArn(), Input: input } });
}

async function putSchedule(name: string, fields: { ScheduleExpression: string; Target: object; ActionAfterCompletion?: string }) {
  const params = { GroupName: config.scheduleGroup(), ScheduleExpressionTimezone: 'UTC', FlexibleTimeWindow: { Mode: 'OFF' }, ...fields };
  try {
    await schedulerCall('PUT', name, params);
    return;
  } catch (error) {
    if (!isNamed(error, 'ResourceNotFoundException')) throw error;
  }
  try {
    await schedulerCall('POST', name, { ...params, ClientToken: randomUUID() });
  } catch (error) {
    // Created by another caller in between: move it to our time instead.
    if (!isNamed(error, 'ConflictException')) throw error;
    await schedulerCall('PUT', name, params);
  }
}

/** Deletes the schedule `name`; one that is already gone is fine. */
export async function deleteSchedule(name: string): Promise<void> {
  try {
    await schedulerCall('DELETE', name);
  } catch (error) {
    if (!isNamed(error, 'ResourceNotFoundException')) throw error;
  }
}

/** The one-time schedules' deletion (a one-time schedule that fired is gone already). */
export const deleteOneTimeSchedule = deleteSchedule;
