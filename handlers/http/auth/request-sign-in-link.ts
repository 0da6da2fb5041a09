import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { sendSignInLink } from '../../../lib/identity/sign-in-mail.ts';

const body = z.strictObject({ email: z.email().check(z.maxLength(254)) });

// The same reply whether or not the address has an account: the link itself is the proof.
export const handler = defineHandler('POST /api/v1/auth/sign-in-link', { body }, async ({ body, sourceIp, log }) => {
  await sendSignInLink(body.email, sourceIp, log);
  return { status: 202, data: { status: 'sent' } };
});
