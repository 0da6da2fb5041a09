import { ApiError } from '../../../lib/http/errors.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { readFunctionsTelemetry } from '../../../lib/functions/telemetry-report.ts';
import { UUID_PATTERN } from '../../../lib/teams/slug.ts';

// An unknown team is not a 404 (spec endpoint 13 lists none): like a team without functions, it has empty arrays and zeros.
export const handler = defineHandler('GET /api/v1/admin/teams/{id}/functions', {}, async ({ params }) => {
  if (!UUID_PATTERN.test(params.id!)) throw new ApiError('ADMIN_TEAM_ID_INVALID');
  return { data: await readFunctionsTelemetry(params.id!.toLowerCase()) };
});
