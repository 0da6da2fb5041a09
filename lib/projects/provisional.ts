import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { scheduler } from '../aws/scheduler.ts';
import { config } from '../config.ts';

/**
 * A project created by a direct upload is provisional until something
 * publishes; about 2 h 15 min after the last begin it is deleted. The delay is
 * configurable so tests can prove the expiry without waiting hours.
 */
export const DEFAULT_PROVISIONAL_EXPIRY_SECONDS = 8100;

export function provisionalExpirySeconds(): number {
  const value = Number(process.env.PROVISIONAL_EXPIRY_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_PROVISIONAL_EXPIRY_SECONDS;
}

/** The variable through which this function learns the provisional-expiry worker's ARN (lib/workers.ts row). */
export const PROVISIONAL_EXPIRY_TARGET_ARN_ENV = 'PROVISIONAL_EXPIRY_TARGET_ARN';

export function provisionalExpiryScheduleName(projectId: string): string {
  return `provisional-${projectId}`;
}

/** EventBridge Scheduler's one-time expression: `at(yyyy-mm-ddThh:mm:ss)`, here in UTC. */
export function atExpression(when: Date): string {
  // Rounded up to the next second: the schedule may fire late, never before provisional_until.
  const seconds = new Date(Math.ceil(when.getTime() / 1000) * 1000);
  return `at(${seconds.toISOString().slice(0, 19)})`;
}

export interface ProvisionalExpiryInput {
  project_id: string;
}

/**
 * (Re)sets the project's one-time expiry schedule to `until`. Each begin on a
 * provisional project moves it; the worker it targets re-checks the project,
 * so a stale or early firing deletes nothing that should live.
 */
export async function scheduleProvisionalExpiry(projectId: string, until: Date): Promise<void> {
  const targetArn = process.env[PROVISIONAL_EXPIRY_TARGET_ARN_ENV];
  if (!targetArn) throw new Error(`Configuration variable ${PROVISIONAL_EXPIRY_TARGET_ARN_ENV} is not set`);
  const input: ProvisionalExpiryInput = { project_id: projectId };
  const params = {
    Name: provisionalExpiryScheduleName(projectId),
    GroupName: config.scheduleGroup(),
    ScheduleExpression: atExpression(until),
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' as const },
    Target: { Arn: targetArn, RoleArn: config.schedulerRoleArn(), Input: JSON.stringify(input) },
    // UpdateSchedule replaces every field, so this is repeated there.
    ActionAfterCompletion: 'DELETE' as const,
  };
  try {
    await scheduler().send(new UpdateScheduleCommand(params));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException) && (error as Error).name !== 'ResourceNotFoundException') throw error;
  }
  try {
    await scheduler().send(new CreateScheduleCommand(params));
  } catch (error) {
    // Another begin created it in between: move it to our time instead.
    if (!(error instanceof ConflictException) && (error as Error).name !== 'ConflictException') throw error;
    await scheduler().send(new UpdateScheduleCommand(params));
  }
}

/** Deletes the expiry schedule; one that is already gone is fine. */
export async function cancelProvisionalExpiry(projectId: string): Promise<void> {
  try {
    await scheduler().send(
      new DeleteScheduleCommand({ Name: provisionalExpiryScheduleName(projectId), GroupName: config.scheduleGroup() }),
    );
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
  }
}
