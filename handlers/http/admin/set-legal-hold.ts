import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { setLegalHold } from '../../../lib/lifecycle/team-deletion.ts';
import { ADMIN_TEAM_ID_INVALID } from '../../../lib/errors/catalogue/admin.ts';

const body = z.strictObject({ hold: z.boolean() });

// The spec calls the path id a team UUID: anything else is the caller's mistake (400), not an unknown team (404).
export const handler = defineHandler(
  'POST /api/v1/admin/teams/{id}/legal-hold',
  { body, uuidParams: { id: ADMIN_TEAM_ID_INVALID } },
  async ({ params, principal, body }) => ({ data: await setLegalHold(params.id!.toLowerCase(), body.hold, principal!.user!.user_id) }),
);
