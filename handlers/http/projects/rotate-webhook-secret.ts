import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { rotateWebhookSecret } from '../../../lib/builds/operations.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

await loadSecrets(['envEncryption']);

export const handler = defineHandler('POST /api/v1/projects/{id}/git/webhook-secret', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: await rotateWebhookSecret(item) };
});
