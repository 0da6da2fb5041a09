import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import type { PlanName } from '../plans.ts';

/** A team's plan and suspension, as the operator commands set them (`admin set-plan`, `admin suspend-team`). */
export interface TeamStandingView {
  team_id: string;
  plan: PlanName;
  suspended_at: string | null;
}

export async function setTeamPlan(teamId: string, plan: PlanName): Promise<TeamStandingView> {
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.team(teamId),
      UpdateExpression: 'SET #plan = :plan, updated_at = :now',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#plan': 'plan' },
      ExpressionAttributeValues: { ':plan': plan, ':now': new Date().toISOString() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return { team_id: teamId, plan, suspended_at: (reply.Attributes?.suspended_at as string | undefined) ?? null };
}

/** Suspends a team (it can no longer begin uploads), or lifts the suspension. */
export async function setTeamSuspended(teamId: string, suspended: boolean): Promise<TeamStandingView> {
  const now = new Date().toISOString();
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.team(teamId),
      UpdateExpression: suspended ? 'SET suspended_at = if_not_exists(suspended_at, :now)' : 'REMOVE suspended_at',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: suspended ? { ':now': now } : undefined,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return {
    team_id: teamId,
    plan: (reply.Attributes?.plan as PlanName | undefined) ?? 'free',
    suspended_at: (reply.Attributes?.suspended_at as string | undefined) ?? null,
  };
}

/** Functions closed beta: whether a team's functions answer. Set by `admin enroll-functions`. */
export interface FunctionsEnrolmentView {
  team_id: string;
  functions_enrolled_at: string | null;
}

/** Enrols a team in the functions beta (the first enrolment time stands), or ends its enrolment. */
export async function setFunctionsEnrolment(teamId: string, enrolled: boolean): Promise<FunctionsEnrolmentView> {
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.team(teamId),
      UpdateExpression: enrolled
        ? 'SET functions_enrolled_at = if_not_exists(functions_enrolled_at, :now)'
        : 'REMOVE functions_enrolled_at',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: enrolled ? { ':now': new Date().toISOString() } : undefined,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return { team_id: teamId, functions_enrolled_at: (reply.Attributes?.functions_enrolled_at as string | undefined) ?? null };
}
