import * as z from '../../../lib/schema.ts';
import { asDeployAttempt } from '../../../lib/attention/team-state.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { idempotencyKey, idempotent } from '../../../lib/idempotency/idempotency.ts';
import { beginUploadWithNewProject } from '../../../lib/publishing/begin-upload.ts';
import { replaySessionView, type TeamStanding } from '../../../lib/publishing/sessions.ts';

const body = z.object({
  // Checked by the manifest rules, which answer INVALID_MANIFEST with every defect.
  files: z.optional(z.unknown()),
  label: z.nullish(z.string().check(z.maxLength(255))),
  project: z.object({
    name: z.string().check(
      z.minLength(1),
      z.maxLength(255),
      z.refine((n) => n.trim().length > 0, { message: 'The name must not be blank.' }),
    ),
    subdomain: z.nullish(z.string().check(z.maxLength(255))),
  }),
});

const ROUTE = 'POST /api/v1/uploads';

export const handler = defineHandler(
  ROUTE,
  // A 50,000-file manifest is several megabytes; API Gateway's own cap (10 MB) is the limit.
  { body, maxJsonBytes: 10 * 1024 * 1024 },
  async (ctx) => {
    const team = ctx.team!.team as unknown as TeamStanding;
    const data = await idempotent({
      teamId: team.id,
      key: idempotencyKey(ctx.headers),
      scope: ROUTE,
      body: ctx.body,
      execute: async () => {
        const session = await asDeployAttempt(team.id, () =>
          beginUploadWithNewProject({
            team,
            caller: { kind: ctx.principal!.kind, client: ctx.headers['x-platform-client'] },
            body: ctx.body,
          }),
        );
        return { result: session, stored: { upload_id: session.upload_id, project: session.project } };
      },
      replay: replaySessionView,
    });
    return { status: 201, data };
  },
);
