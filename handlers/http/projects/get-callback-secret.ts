import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { callbackSecret } from '../../../lib/functions/callback-secret.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

await loadSecrets(['envEncryption']);

/** The key completion callbacks are signed with; made on the first read (team admins only). */
export const handler = defineHandler('GET /api/v1/projects/{id}/functions/callback-secret', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: { secret: await callbackSecret(item.id, item) } };
});
