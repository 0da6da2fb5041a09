import * as z from '../../../lib/schema.ts';
import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { authorizeEnvProject, writerOf } from '../../../lib/env/authorize.ts';
import { upsertEnvVariables } from '../../../lib/env/records.ts';
import {
  DEFAULT_ENV_TARGETS,
  MAX_ENV_CONTENT_BYTES,
  MAX_ENV_IMPORT_VARIABLES,
  envEnvironmentSchema,
  envTargetsSchema,
  parseEnvContent,
} from '../../../lib/env/variables.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { ENV_IMPORT_EMPTY, ENV_IMPORT_TOO_MANY } from '../../../lib/errors/catalogue/accounts.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// Encrypts the imported values: the key comes from Secrets Manager on cold start, before the first request.
await loadSecrets(['envEncryption']);

const body = z.object({
  content: z.string().check(z.maxLength(MAX_ENV_CONTENT_BYTES)),
  environment: envEnvironmentSchema,
  targets: envTargetsSchema,
});

export const handler = defineHandler(
  'POST /api/v1/projects/{id}/env/bulk',
  // JSON escaping can double the size of the .env text.
  { body, maxJsonBytes: 2 * MAX_ENV_CONTENT_BYTES + 4096 },
  async (ctx) => {
    const { params, body, principal, log } = ctx;
    const { project } = await authorizeEnvProject(ctx, params.id!);
    const { variables, rejected } = parseEnvContent(body.content);
    if (variables.length === 0) throw new ApiError(ENV_IMPORT_EMPTY, { details: { rejected } });
    if (variables.length > MAX_ENV_IMPORT_VARIABLES) {
      throw new ApiError(ENV_IMPORT_TOO_MANY, { details: { count: variables.length, max: MAX_ENV_IMPORT_VARIABLES } });
    }
    const targets = body.targets ?? DEFAULT_ENV_TARGETS;
    const { created, updated } = await upsertEnvVariables(
      {
        projectId: project.id,
        teamId: project.team_id,
        environment: body.environment,
        targets,
        updatedBy: writerOf(principal),
        now: new Date().toISOString(),
      },
      variables,
    );
    // Counts only: names and values of variables stay out of the logs.
    log.info('environment variables imported', {
      project_id: project.id,
      created: created.length,
      updated: updated.length,
      rejected: rejected.length,
    });
    return { data: { environment: body.environment, targets, created, updated, rejected } };
  },
);
