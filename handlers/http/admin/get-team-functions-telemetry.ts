import { defineHandler } from '../../../lib/http/pipeline.ts';
import { readFunctionsTelemetry } from '../../../lib/functions/telemetry-report.ts';
import { ADMIN_TEAM_ID_INVALID } from '../../../lib/errors/catalogue/admin.ts';

// An unknown team is not a 404 (spec endpoint 13 lists none): like a team without functions, it has empty arrays and zeros.
export const handler = defineHandler(
  'GET /api/v1/admin/teams/{id}/functions',
  { uuidParams: { id: ADMIN_TEAM_ID_INVALID } },
  async ({ params }) => ({ data: await readFunctionsTelemetry(params.id!.toLowerCase()) }),
);
