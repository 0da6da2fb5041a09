import { defineHandler } from '../../../lib/http/pipeline.ts';
import { MAX_INLINE_FILE_BYTES } from '../../../lib/plans.ts';
import { storeUploadedFiles } from '../../../lib/publishing/files.ts';
import { loadUploadSessionForCaller } from '../../../lib/publishing/sessions.ts';

export const handler = defineHandler(
  'PUT /api/v1/uploads/{upload_id}/files/{hash}',
  // Larger files go by upload URL (lib/publishing/large-files.ts): Lambda could not take them.
  { rawBody: { maxBytes: MAX_INLINE_FILE_BYTES } },
  async (ctx) => {
    const session = await loadUploadSessionForCaller(ctx, ctx.params.upload_id!);
    const [received] = await storeUploadedFiles(session, [{ hash: ctx.params.hash!, bytes: ctx.rawBody }]);
    return { data: { upload_id: session.upload_id, ...received!, received: true } };
  },
);
