import * as z from 'zod';
import { promoteDeployment } from '../../../lib/deployments/deployments.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

const body = z.object({ deployment_id: z.string().min(1).max(255) });

export const handler = defineHandler('POST /api/v1/projects/{id}/promote', { body }, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: await promoteDeployment(item, ctx.body.deployment_id) };
});
