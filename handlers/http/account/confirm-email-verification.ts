import * as z from 'zod';
import { confirmEmail } from '../../../lib/account/email-confirmation.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const body = z.object({ token: z.string().min(1).max(512) }).strict();

export const handler = defineHandler('POST /api/v1/email-verification/confirm', { body }, async ({ body }) => {
  const confirmed = await confirmEmail(body.token);
  return { data: { status: 'confirmed', email: confirmed.email } };
});
