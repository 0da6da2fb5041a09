import { resendConfirmation } from '../../../lib/account/email-verification.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// No body: the link goes to the account's own address, never to one named in the request.
export const handler = defineHandler('POST /api/v1/me/email-verification/resend', {}, async ({ principal, sourceIp, log }) => {
  const status = await resendConfirmation(principal!.user!, sourceIp, log);
  return { data: { status } };
});
