import type { TeamRole } from '../access/rules.ts';
import type { Team } from '../teams/teams.ts';
import type { CredentialRecord } from './credential-records.ts';
import type { User } from '../users/user-records.ts';

/**
 * Who is calling, once a request's credential is checked (lib/http/authorize.ts), and what that caller
 * may do in a team. Types only, so the per-area access rules (teams, projects, domains, env) name them
 * without importing the http adapter.
 */
export interface Principal {
  kind: 'session' | 'api_key';
  /** Where the token came from: the Authorization header, or the console's session cookie. */
  via: 'bearer' | 'cookie';
  /** The SHA-256 of the token (what sign-out revokes). */
  tokenHash: string;
  /** The signed-in user; null for an API key. */
  user: User | null;
  credential: CredentialRecord;
  isPlatformAdmin: boolean;
  /**
   * An API key's own team, read as soon as the key is known: nearly every request an API key makes acts
   * in that team, so its check need not wait for the reads before it (a session's, a project's).
   */
  ownTeam?: Promise<Team | null>;
}

export interface TeamAccess {
  team: Team;
  role: TeamRole;
  /** The team was addressed by a slug it renamed away from (still inside its 30 days). */
  retiredSlug: boolean;
}
