import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { config } from '../config.ts';
import { scheduler } from './scheduler.ts';

/**
 * One-time EventBridge Scheduler schedules in the platform's group, each
 * invoking a schedule worker of lib/workers.ts (named by the variable that
 * holds its ARN) with a JSON input. The worker re-checks its record, so a
 * stale or early firing changes nothing that should stay.
 */

export function atExpression(when: Date): string {
  // Rounded up to the next second: the schedule may fire late, never before `when`.
  const seconds = new Date(Math.ceil(when.getTime() / 1000) * 1000);
  return `at(${seconds.toISOString().slice(0, 19)})`;
}

const isNamed = (error: unknown, name: string) => (error as Error).name === name;

/** Creates the schedule `name`, or moves an existing one to `at` with this input. */
export async function setOneTimeSchedule(name: string, at: Date, targetArnEnv: string, input: unknown): Promise<void> {
  const targetArn = process.env[targetArnEnv];
  if (!targetArn) throw new Error(`Configuration variable ${targetArnEnv} is not set`);
  const params = {
    Name: name,
    GroupName: config.scheduleGroup(),
    ScheduleExpression: atExpression(at),
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
    if (!(error instanceof ResourceNotFoundException) && !isNamed(error, 'ResourceNotFoundException')) throw error;
  }
  try {
    await scheduler().send(new CreateScheduleCommand(params));
  } catch (error) {
    // Created by another caller in between: move it to our time instead.
    if (!(error instanceof ConflictException) && !isNamed(error, 'ConflictException')) throw error;
    await scheduler().send(new UpdateScheduleCommand(params));
  }
}

/** Deletes the schedule `name`; one that is already gone is fine. */
export async function deleteOneTimeSchedule(name: string): Promise<void> {
  try {
    await scheduler().send(new DeleteScheduleCommand({ Name: name, GroupName: config.scheduleGroup() }));
  } catch (error) {
    if (!isNamed(error, 'ResourceNotFoundException')) throw error;
  }
}
