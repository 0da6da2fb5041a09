import * as z from '../../../lib/schema.ts';
import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { authorizeEnvProject, writerOf } from '../../../lib/env/authorize.ts';
import { upsertEnvVariable } from '../../../lib/env/records.ts';
import {
  DEFAULT_ENV_TARGETS,
  MAX_ENV_VALUE_BYTES,
  envEnvironmentSchema,
  envNameProblem,
  envTargetsSchema,
} from '../../../lib/env/variables.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { ENV_NAME_INVALID, ENV_NAME_RESERVED, ENV_VALUE_TOO_LARGE } from '../../../lib/errors/catalogue/accounts.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// Encrypts the value: the key comes from Secrets Manager on cold start, before the first request.
await loadSecrets(['envEncryption']);

const body = z.object({
  value: z.string(),
  environment: envEnvironmentSchema,
  targets: envTargetsSchema,
});

export const handler = defineHandler(
  'PUT /api/v1/projects/{id}/env/{name}',
  { body, maxJsonBytes: 2 * MAX_ENV_VALUE_BYTES + 4096 },
  async (ctx) => {
    const { params, body, principal, log } = ctx;
    const { project } = await authorizeEnvProject(ctx, params.id!);
    const name = params.name!;
    const problem = envNameProblem(name);
    if (problem === 'invalid_name') throw new ApiError(ENV_NAME_INVALID);
    if (problem === 'reserved_name') throw new ApiError(ENV_NAME_RESERVED);
    if (Buffer.byteLength(body.value) > MAX_ENV_VALUE_BYTES) throw new ApiError(ENV_VALUE_TOO_LARGE);
    const { created, record } = await upsertEnvVariable({
      projectId: project.id,
      teamId: project.team_id,
      environment: body.environment,
      name,
      value: body.value,
      targets: body.targets ?? DEFAULT_ENV_TARGETS,
      updatedBy: writerOf(principal),
      now: new Date().toISOString(),
    });
    log.info('environment variable set', { project_id: project.id, created });
    return { status: created ? 201 : 200, data: { ...record, created } };
  },
);
