import { defineHandler } from '../../../lib/http/pipeline.ts';
import { largeFileUploadUrl } from '../../../lib/publishing/large-files.ts';
import { loadUploadSessionForCaller } from '../../../lib/publishing/sessions.ts';

export const handler = defineHandler('POST /api/v1/uploads/{upload_id}/files/{hash}/upload-url', {}, async (ctx) => {
  const session = await loadUploadSessionForCaller(ctx, ctx.params.upload_id!);
  return { data: await largeFileUploadUrl(session, ctx.params.hash!) };
});
