import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { rotateCallbackSecret } from '../../../lib/functions/callback-secret.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

await loadSecrets(['envEncryption']);

/** Replaces the callback secret: the previous one stops verifying deliveries at once. */
export const handler = defineHandler('POST /api/v1/projects/{id}/functions/callback-secret/rotate', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: { secret: await rotateCallbackSecret(item.id) } };
});
