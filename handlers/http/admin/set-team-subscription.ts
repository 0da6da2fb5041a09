import { SUBSCRIPTION_STATUSES, setTeamSubscription } from '../../../lib/attention/team-state.ts';
import * as z from '../../../lib/schema.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { TEAM_NOT_FOUND } from '../../../lib/errors/catalogue/accounts.ts';
import { ADMIN_TEAM_ID_INVALID } from '../../../lib/errors/catalogue/admin.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { plans, type PlanName } from '../../../lib/plans.ts';
import { getTeam } from '../../../lib/teams/teams.ts';

const body = z.strictObject({
  plan: z.enum(Object.keys(plans) as [PlanName, ...PlanName[]]),
  status: z.enum(SUBSCRIPTION_STATUSES),
  cancel_at_period_end: z.optional(z.boolean()),
  // When the subscription started, for one set up elsewhere first (a billing provider's record); never in the future.
  created_at: z.optional(
    z.iso.datetime().check(z.refine((at) => Date.parse(at) <= Date.now() + 60_000, { message: 'created_at must not be in the future.' })),
  ),
});

const options = { body, uuidParams: { id: ADMIN_TEAM_ID_INVALID } } as const;

export const handler = defineHandler('PUT /api/v1/admin/teams/{id}/subscription', options, async ({ params, body }) => {
  const teamId = params.id!.toLowerCase();
  const team = await getTeam(teamId);
  if (!team) throw new ApiError(TEAM_NOT_FOUND);
  const subscription = await setTeamSubscription(teamId, {
    plan: body.plan,
    status: body.status,
    cancel_at_period_end: body.cancel_at_period_end ?? false,
    created_at: body.created_at === undefined ? undefined : new Date(body.created_at).toISOString(),
  });
  return { data: subscription };
});
