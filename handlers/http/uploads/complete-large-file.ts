import { defineHandler } from '../../../lib/http/pipeline.ts';
import { completeLargeFile } from '../../../lib/publishing/large-files.ts';
import { loadUploadSessionForCaller } from '../../../lib/publishing/sessions.ts';

export const handler = defineHandler('POST /api/v1/uploads/{upload_id}/files/{hash}/complete', {}, async (ctx) => {
  const session = await loadUploadSessionForCaller(ctx, ctx.params.upload_id!);
  return { data: { upload_id: session.upload_id, ...(await completeLargeFile(session, ctx.params.hash!)), received: true } };
});
