import * as z from '../../../lib/schema.ts';
import { asDeployAttempt } from '../../../lib/attention/team-state.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';
import { idempotencyKey, idempotent } from '../../../lib/idempotency/idempotency.ts';
import { beginUploadForProject } from '../../../lib/publishing/begin-upload.ts';
import { replaySessionView, type TeamStanding } from '../../../lib/publishing/sessions.ts';

const body = z.object({
  files: z.optional(z.unknown()),
  label: z.nullish(z.string().check(z.maxLength(255))),
});

const ROUTE = 'POST /api/v1/projects/{id}/uploads';

export const handler = defineHandler(ROUTE, { body, maxJsonBytes: 10 * 1024 * 1024 }, async (ctx) => {
  const { item, access } = await loadProjectForCaller(ctx, ctx.params.id!);
  const team = access.team as unknown as TeamStanding;
  const data = await idempotent({
    teamId: team.id,
    key: idempotencyKey(ctx.headers),
    scope: `${ROUTE} ${item.id}`,
    body: ctx.body,
    execute: async () => {
      const session = await asDeployAttempt(team.id, () => beginUploadForProject({ team, projectItem: item, body: ctx.body }));
      return { result: session, stored: { upload_id: session.upload_id } };
    },
    replay: replaySessionView,
  });
  return { status: 201, data };
});
