/**
 * Authorization rules, declared in the route row so that who may call an
 * endpoint is visible in one place. The pipeline enforces them before the
 * handler runs (for `resource` team rules, the handler names the team once it
 * has loaded the resource, and the pipeline's `authorizeTeam` applies the rule).
 */
export type TeamRole = 'owner' | 'admin' | 'member';

export const roleRank: Record<TeamRole, number> = { member: 1, admin: 2, owner: 3 };

export type AccessRule =
  | { kind: 'public' }
  | { kind: 'signedIn'; sessionOnly: boolean }
  | { kind: 'team'; minRole: TeamRole; team: 'current' | 'resource'; sessionOnly: boolean }
  | { kind: 'platformAdmin' };

export const access = {
  /** No credentials needed (abuse reports, the queued function door, fallbacks). */
  public: (): AccessRule => ({ kind: 'public' }),
  /** Any valid credential; `sessionOnly` refuses API keys. */
  signedIn: (opts: { sessionOnly?: boolean } = {}): AccessRule => ({
    kind: 'signedIn',
    sessionOnly: opts.sessionOnly ?? false,
  }),
  /**
   * A role of at least `minRole` in a team: the caller's current team
   * (`X-Team-Id`, else the user's default team, or the API key's team), or the
   * team owning the addressed resource.
   */
  team: (minRole: TeamRole, opts: { team?: 'current' | 'resource'; sessionOnly?: boolean } = {}): AccessRule => ({
    kind: 'team',
    minRole,
    team: opts.team ?? 'current',
    sessionOnly: opts.sessionOnly ?? false,
  }),
  /** Platform administrators only (a session of a user flagged as such). */
  platformAdmin: (): AccessRule => ({ kind: 'platformAdmin' }),
};
