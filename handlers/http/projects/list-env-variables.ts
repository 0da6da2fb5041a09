import * as z from '../../../lib/schema.ts';
import { authorizeEnvProject } from '../../../lib/env/authorize.ts';
import { listEnvVariables } from '../../../lib/env/records.ts';
import { envEnvironmentSchema } from '../../../lib/env/variables.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const query = z.object({ environment: z.optional(envEnvironmentSchema) });

export const handler = defineHandler('GET /api/v1/projects/{id}/env', { query }, async (ctx) => {
  const { project } = await authorizeEnvProject(ctx, ctx.params.id!);
  // Names and metadata only: values are write-only through the API.
  return { data: { variables: await listEnvVariables(project.id, ctx.query.environment) } };
});
