import { randomBytes } from 'node:crypto';
import { sendTextMail } from '../aws/ses.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { EMAIL_DELIVERY_UNAVAILABLE } from '../errors/catalogue/accounts.ts';
import type { User } from '../users/user-records.ts';
import type { RequestLogger } from '../logger.ts';
import { confirmationTokenHash } from './email-confirmation.ts';
import { deleteConfirmation, insertConfirmation } from './confirmation-records.ts';
import { takeResendAllowance } from './resend-limits.ts';

/** A confirmation link works for 24 hours, once. */
export const CONFIRMATION_LINK_HOURS = 24;

export function confirmationLink(token: string): string {
  const url = new URL(config.emailConfirmUrl());
  url.searchParams.set('token', token);
  return url.toString();
}

function confirmationMail(user: User, link: string) {
  const text = [
    `Hello${user.name ? ` ${user.name}` : ''},`,
    '',
    'Confirm the e-mail address of your Slipway account by opening this link:',
    link,
    '',
    `The link works once and expires in ${CONFIRMATION_LINK_HOURS} hours.`,
    'If you did not ask for it, ignore this message.',
  ].join('\n');
  return { subject: 'Confirm your e-mail address', text };
}

/**
 * Mails a new confirmation link to the account's own address. Nothing is sent
 * for an address already confirmed. The allowance (3 per account, 10 per IP
 * address per hour) is taken before anything else; only the token's hash is
 * stored. When SES refuses or fails, the allowance is given back, the token is
 * removed, and the caller gets 503.
 */
export async function resendConfirmation(user: User, sourceIp: string, log: RequestLogger): Promise<'sent' | 'already_confirmed'> {
  if (user.email_verified) return 'already_confirmed';
  const giveBack = await takeResendAllowance(user.user_id, sourceIp);

  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  const expires = new Date(now.getTime() + CONFIRMATION_LINK_HOURS * 3_600_000);
  const tokenHash = confirmationTokenHash(token);
  await insertConfirmation(tokenHash, user, now, expires);

  const mail = confirmationMail(user, confirmationLink(token));
  try {
    await sendTextMail(user.email, mail);
  } catch (error) {
    log.error('confirmation e-mail not sent', { error: (error as Error).name });
    await Promise.allSettled([giveBack(), deleteConfirmation(tokenHash)]);
    throw new ApiError(EMAIL_DELIVERY_UNAVAILABLE);
  }
  return 'sent';
}
