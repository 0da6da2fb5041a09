import { listLiveFunctions } from '../../../lib/functions/records.ts';
import { isTeamEnrolledInFunctions } from '../../../lib/functions/resolve.ts';
import { withScheduleTimes } from '../../../lib/functions/schedules.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler('GET /api/v1/projects/{id}/functions', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  // A team outside the functions beta has its functions built and listed, but the doors answer none of them:
  // the CLI and the console say so instead of showing URLs that answer 404.
  const [live, enrolled] = await Promise.all([listLiveFunctions(item), isTeamEnrolledInFunctions(item.team_id)]);
  return { data: { functions: await withScheduleTimes(item.id, live), functions_beta_enrolled: enrolled } };
});
