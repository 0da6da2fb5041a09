import * as z from '../../../lib/schema.ts';
import { confirmEmail } from '../../../lib/account/email-confirmation.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const body = z.strictObject({ token: z.string().check(z.minLength(1), z.maxLength(512)) });

export const handler = defineHandler('POST /api/v1/email-verification/confirm', { body }, async ({ body }) => {
  const confirmed = await confirmEmail(body.token);
  return { data: { status: 'confirmed', email: confirmed.email } };
});
