import { lookupCredential } from '../identity/credential-records.ts';
import { bearerToken, hashToken } from '../identity/tokens.ts';
import type { Principal, TeamAccess } from '../identity/principal.ts';
import { getUser } from '../users/user-records.ts';
import { getMembership } from '../teams/membership-records.ts';
import { getTeam, resolveTeam } from '../teams/teams.ts';
import { roleRank, type AccessRule, type TeamRole } from '../access/rules.ts';
import { ApiError } from '../errors/api-error.ts';
import { FORBIDDEN, NO_CURRENT_TEAM, PLATFORM_ADMIN_REQUIRED, SESSION_REQUIRED, UNAUTHENTICATED } from '../errors/catalogue/request.ts';
import { TEAM_NOT_FOUND } from '../errors/catalogue/accounts.ts';

/**
 * The caller behind an Authorization header, else behind the console's session
 * cookie (which carries sessions only); 401 for missing, malformed, unknown,
 * expired or revoked. A request with both is judged by its header alone.
 */
export async function authenticate(authorization: string | undefined, cookieToken: string | null = null): Promise<Principal> {
  const via = authorization ? 'bearer' : 'cookie';
  const token = authorization ? bearerToken(authorization) : cookieToken?.startsWith('slw_s_') ? cookieToken : null;
  const credential = token ? await lookupCredential(token) : null;
  if (!token || !credential) throw new ApiError(UNAUTHENTICATED);
  const tokenHash = hashToken(token);
  if (credential.kind === 'api_key') {
    const ownTeam = credential.team_id ? getTeam(credential.team_id) : Promise.resolve(null);
    // Awaited only by a request that checks the team; a failed read is that check's failure.
    ownTeam.catch(() => undefined);
    return { kind: 'api_key', via, tokenHash, user: null, credential, isPlatformAdmin: false, ownTeam };
  }
  const user = credential.user_id ? await getUser(credential.user_id) : null;
  if (!user) throw new ApiError(UNAUTHENTICATED);
  return { kind: 'session', via, tokenHash, user, credential, isPlatformAdmin: user.is_platform_admin };
}

/** Applies the parts of a rule that need no team: session-only and platform-admin. */
export function checkPrincipal(principal: Principal, rule: AccessRule): void {
  if (rule.kind === 'platformAdmin' && !principal.isPlatformAdmin) throw new ApiError(PLATFORM_ADMIN_REQUIRED);
  if ((rule.kind === 'signedIn' || rule.kind === 'team') && rule.sessionOnly && principal.kind !== 'session') {
    throw new ApiError(SESSION_REQUIRED);
  }
}

async function roleIn(principal: Principal, teamId: string): Promise<TeamRole | null> {
  if (principal.kind === 'api_key') {
    return principal.credential.team_id === teamId ? principal.credential.role : null;
  }
  const membership = await getMembership(teamId, principal.user!.user_id);
  return membership?.role ?? null;
}

/**
 * The caller's access to a team addressed by UUID or slug under a team rule:
 * 404 when no such team exists, 403 when the caller is not a member or has a
 * lower role than the rule asks.
 */
export async function authorizeTeam(principal: Principal, minRole: TeamRole, idOrSlug: string): Promise<TeamAccess> {
  const resolved =
    principal.ownTeam && idOrSlug.toLowerCase() === principal.credential.team_id
      ? await principal.ownTeam.then((team) => (team ? { team, retiredSlug: false } : null))
      : await resolveTeam(idOrSlug);
  if (!resolved) {
    // An API key whose own team is gone (purged) is no credential any more.
    if (principal.kind === 'api_key' && idOrSlug.toLowerCase() === principal.credential.team_id) throw new ApiError(UNAUTHENTICATED);
    throw new ApiError(TEAM_NOT_FOUND);
  }
  const role = await roleIn(principal, resolved.team.id);
  if (!role || roleRank[role] < roleRank[minRole]) throw new ApiError(FORBIDDEN);
  return { team: resolved.team, role, retiredSlug: resolved.retiredSlug };
}

/**
 * The caller's current team: an API key's own team; for a session the team
 * named by `X-Team-Id` (UUID or slug), else the team the session was opened
 * for, else the user's default team.
 */
export async function currentTeam(principal: Principal, minRole: TeamRole, xTeamId: string | undefined): Promise<TeamAccess> {
  let idOrSlug: string | null | undefined;
  if (principal.kind === 'api_key') {
    idOrSlug = principal.credential.team_id;
    if (xTeamId && xTeamId !== idOrSlug) {
      // An API key is bound to one team; naming another is not a way around it.
      const named = await resolveTeam(xTeamId);
      if (!named) throw new ApiError(TEAM_NOT_FOUND);
      if (named.team.id !== idOrSlug) throw new ApiError(FORBIDDEN);
    }
  } else {
    idOrSlug = xTeamId?.trim() || principal.credential.team_id || principal.user!.default_team_id;
  }
  if (!idOrSlug) throw new ApiError(NO_CURRENT_TEAM);
  return authorizeTeam(principal, minRole, idOrSlug);
}
