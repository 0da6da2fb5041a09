import { defineHandler } from '../../../lib/http/pipeline.ts';
import { pendingInvitationsOf } from '../../../lib/identity/me.ts';

export const handler = defineHandler('GET /api/v1/me/invitations', {}, async ({ principal }) => ({
  data: await pendingInvitationsOf(principal!.user!),
}));
