import { isConditionalCheckFailure } from '../db/errors.ts';
import { ApiError } from '../errors/api-error.ts';
import { SIGN_IN_LINK_INVALID } from '../errors/catalogue/request.ts';
import { createTeam, UserHasTeamError } from '../teams/teams.ts';
import { createSession } from './credential-records.ts';
import { consumeSignInLink } from './sign-in-link-records.ts';
import { createUser, EmailTakenError, getUser, getUserByEmail, markEmailVerified, type User } from '../users/user-records.ts';

// Sending a link lives apart (sign-in-mail.ts), so the sign-in handler's bundle carries no SES client.

/** The account of an address, created on its first sign-in (two racing first sign-ins make one). */
async function accountOf(email: string): Promise<User> {
  const existing = await getUserByEmail(email);
  if (existing) return existing;
  try {
    return await createUser({ email, source: 'email_link', emailVerified: true });
  } catch (error) {
    if (!(error instanceof EmailTakenError)) throw error;
    const winner = await getUserByEmail(email);
    if (!winner) throw error;
    return winner;
  }
}

/** A first sign-in's personal team, named after the address; none when the user has a team already. */
async function ensurePersonalTeam(user: User): Promise<User> {
  if (user.default_team_id) return user;
  const localPart = user.email.split('@')[0] || 'my';
  try {
    await createTeam({ name: `${localPart}'s team`, ownerUserId: user.user_id, personal: true });
  } catch (error) {
    if (!(error instanceof UserHasTeamError)) throw error;
  }
  return (await getUser(user.user_id)) ?? user;
}

/**
 * Uses a sign-in link: the link's address signs in (its account and a
 * personal team are made on the first sign-in; the address counts as
 * confirmed) and gets a new session. 400 SIGN_IN_LINK_INVALID for a
 * malformed, unknown, expired or used link.
 */
export async function signInWithLink(token: string): Promise<{ user: User; sessionToken: string }> {
  const email = await consumeSignInLink(token);
  if (!email) throw new ApiError(SIGN_IN_LINK_INVALID);
  let user = await accountOf(email);
  try {
    user = await markEmailVerified(user);
  } catch (error) {
    // The account's address changed after the link went out: it still signs in, unconfirmed.
    if (!isConditionalCheckFailure(error)) throw error;
  }
  user = await ensurePersonalTeam(user);
  return { user, sessionToken: await createSession(user.user_id) };
}
