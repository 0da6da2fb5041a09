import { finalizeUpload } from '../../../lib/publishing/publish.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadUploadSessionForCaller } from '../../../lib/publishing/sessions.ts';

export const handler = defineHandler('POST /api/v1/uploads/{upload_id}/finalize', {}, async (ctx) => {
  const session = await loadUploadSessionForCaller(ctx, ctx.params.upload_id!);
  return { data: await finalizeUpload(session) };
});
