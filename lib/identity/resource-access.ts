import type { Principal, TeamAccess } from './principal.ts';
import { ApiError, isApiError, type ErrorEntry } from '../errors/api-error.ts';
import { getMembership } from '../teams/membership-records.ts';

export interface ResourceContext {
  principal: Principal | null;
  authorizeTeam(idOrSlug: string): Promise<TeamAccess>;
}

/**
 * Applies the route's team rule to the team owning a resource (a project, an upload, a domain).
 * Someone outside that team gets the resource's 404, as if it did not exist:
 * ids are not to be probed across teams (and promote's spec lists 400 and 404
 * only). A member whose role is below the rule gets 403.
 */
export async function authorizeResourceTeam(ctx: ResourceContext, teamId: string, notFound: ErrorEntry): Promise<TeamAccess> {
  try {
    return await ctx.authorizeTeam(teamId);
  } catch (error) {
    if (!isApiError(error) || (error.code !== 'FORBIDDEN' && error.code !== 'TEAM_NOT_FOUND')) throw error;
    const principal = ctx.principal!;
    const member =
      principal.kind === 'api_key'
        ? principal.credential.team_id === teamId
        : (await getMembership(teamId, principal.user!.user_id)) !== null;
    if (!member) throw new ApiError(notFound);
    throw error;
  }
}
