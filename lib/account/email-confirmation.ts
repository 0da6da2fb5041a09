import { createHash } from 'node:crypto';
import { TransactionRefused, transact } from '../db/transact.ts';
import { emailVerified } from '../users/user-records.ts';
import { ApiError } from '../errors/api-error.ts';
import { EMAIL_CONFIRMATION_INVALID } from '../errors/catalogue/accounts.ts';
import { confirmationUse, getConfirmation } from './confirmation-records.ts';

// Consuming a link lives apart from sending one, so the confirm handler's
// bundle carries no SES client.

/** 32 random bytes, base64url. */
const CONFIRMATION_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Only this hash of a confirmation token is stored. */
export const confirmationTokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Consumes a confirmation token and marks the address confirmed, in one
 * transaction: the token must exist, be unused and unexpired (so of two
 * racing confirms one wins), and the account's address must still be the one
 * the link was sent to.
 */
export async function confirmEmail(token: string): Promise<{ user_id: string; email: string }> {
  if (!CONFIRMATION_TOKEN_SHAPE.test(token)) throw new ApiError(EMAIL_CONFIRMATION_INVALID);
  const tokenHash = confirmationTokenHash(token);
  const record = await getConfirmation(tokenHash);
  if (!record) throw new ApiError(EMAIL_CONFIRMATION_INVALID);
  const now = new Date().toISOString();
  try {
    await transact([confirmationUse(tokenHash, now), emailVerified(record.user_id, record.email, now)]);
  } catch (error) {
    if (error instanceof TransactionRefused || (error as Error).name === 'TransactionConflictException') {
      throw new ApiError(EMAIL_CONFIRMATION_INVALID);
    }
    throw error;
  }
  return { user_id: record.user_id, email: record.email };
}
