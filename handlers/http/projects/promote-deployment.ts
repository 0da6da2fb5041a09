import * as z from '../../../lib/schema.ts';
import { promoteDeployment } from '../../../lib/promotion/deployments.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';
import { PROJECT_ID_INVALID } from '../../../lib/errors/catalogue/sites.ts';

const body = z.object({ deployment_id: z.string().check(z.minLength(1), z.maxLength(255)) });

// The spec calls the path id a project UUID (promote's errors are 400 and 404): anything else is a 400.
const options = { body, uuidParams: { id: PROJECT_ID_INVALID } } as const;

export const handler = defineHandler('POST /api/v1/projects/{id}/promote', options, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: await promoteDeployment(item, ctx.body.deployment_id) };
});
