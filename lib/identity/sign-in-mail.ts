import { takeHourlyAllowance } from '../account/resend-limits.ts';
import { sendTextMail } from '../aws/ses.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { EMAIL_DELIVERY_UNAVAILABLE } from '../errors/catalogue/accounts.ts';
import type { RequestLogger } from '../logger.ts';
import { createSignInLink, deleteSignInLink, SIGN_IN_LINK_MINUTES } from './sign-in-link-records.ts';
import { SIGN_IN_LINK_LIMITED } from '../errors/catalogue/request.ts';

/** Sign-in links, limited like confirmation resends: 3 per address and 10 per IP address per hour. */
export const SIGN_IN_LIMITS = { address: 3, ip: 10 } as const;

/**
 * The console page that signs in with a link. The token travels in the
 * fragment: browsers never send it to a server or in a Referer, and a mail
 * scanner that fetches the link does not use it (the page POSTs it).
 */
export function signInUrl(token: string): string {
  return `${config.consoleUrl()}/sign-in#token=${token}`;
}

export function signInMail(link: string) {
  const text = [
    'Hello,',
    '',
    'Open this link to sign in to Slipway:',
    link,
    '',
    `The link works once and expires in ${SIGN_IN_LINK_MINUTES} minutes.`,
    'If you did not ask for it, ignore this message: nobody can sign in without it.',
  ].join('\n');
  return { subject: 'Your Slipway sign-in link', text };
}

/**
 * Mails a sign-in link to `email`, whether or not it has an account (the reply
 * never tells which). The allowance is taken first; when SES fails it is given
 * back, the link removed, and the caller gets 503.
 */
export async function sendSignInLink(email: string, sourceIp: string, log: RequestLogger): Promise<void> {
  const address = email.trim().toLowerCase();
  const giveBack = await takeHourlyAllowance(
    [
      { scope: `sign-in:address:${address}`, limit: SIGN_IN_LIMITS.address },
      { scope: `sign-in:ip:${sourceIp || 'unknown'}`, limit: SIGN_IN_LIMITS.ip },
    ],
    SIGN_IN_LINK_LIMITED,
  );
  const { token } = await createSignInLink(address);
  try {
    await sendTextMail(address, signInMail(signInUrl(token)));
  } catch (error) {
    log.error('sign-in e-mail not sent', { error: (error as Error).name });
    await Promise.allSettled([giveBack(), deleteSignInLink(token)]);
    throw new ApiError(EMAIL_DELIVERY_UNAVAILABLE);
  }
}
