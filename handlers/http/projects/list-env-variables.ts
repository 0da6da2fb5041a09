import { z } from 'zod';
import { authorizeEnvProject } from '../../../lib/env/authorize.ts';
import { listEnvVariables } from '../../../lib/env/store.ts';
import { envEnvironmentSchema } from '../../../lib/env/variables.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const query = z.object({ environment: envEnvironmentSchema.optional() });

export const handler = defineHandler('GET /api/v1/projects/{id}/env', { query }, async ({ params, query, authorizeTeam }) => {
  const { project } = await authorizeEnvProject(params.id!, authorizeTeam);
  // Names and metadata only: values are write-only through the API.
  return { data: { variables: await listEnvVariables(project.id, query.environment) } };
});
