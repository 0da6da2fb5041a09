import { writeFunctionsEnrolment, writePlan, writeSuspended } from './records.ts';
import type { PlanName } from '../plans.ts';

/** A team's plan and suspension, as the operator commands set them (`admin set-plan`, `admin suspend-team`). */
export interface TeamStandingView {
  team_id: string;
  plan: PlanName;
  suspended_at: string | null;
}

export async function setTeamPlan(teamId: string, plan: PlanName): Promise<TeamStandingView> {
  const team = await writePlan(teamId, plan);
  return { team_id: teamId, plan, suspended_at: team.suspended_at ?? null };
}

/** Suspends a team (it can no longer begin uploads), or lifts the suspension. */
export async function setTeamSuspended(teamId: string, suspended: boolean): Promise<TeamStandingView> {
  const team = await writeSuspended(teamId, suspended);
  return {
    team_id: teamId,
    plan: (team.plan as PlanName | undefined) ?? 'free',
    suspended_at: team.suspended_at ?? null,
  };
}

/** Functions closed beta: whether a team's functions answer. Set by `admin enroll-functions`. */
export interface FunctionsEnrolmentView {
  team_id: string;
  functions_enrolled_at: string | null;
}

/** Enrols a team in the functions beta (the first enrolment time stands), or ends its enrolment. */
export async function setFunctionsEnrolment(teamId: string, enrolled: boolean): Promise<FunctionsEnrolmentView> {
  const team = await writeFunctionsEnrolment(teamId, enrolled);
  return { team_id: teamId, functions_enrolled_at: team.functions_enrolled_at ?? null };
}
