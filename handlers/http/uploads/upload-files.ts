import { defineHandler } from '../../../lib/http/pipeline.ts';
import { MAX_BATCH_BYTES } from '../../../lib/plans.ts';
import { parseUploadBatch } from '../../../lib/publishing/batch.ts';
import { storeUploadedFiles } from '../../../lib/publishing/files.ts';
import { loadUploadSessionForCaller } from '../../../lib/publishing/sessions.ts';

export const handler = defineHandler(
  'POST /api/v1/uploads/{upload_id}/files',
  // The request limit covers the multipart framing too: a little under MAX_BATCH_BYTES of files.
  { rawBody: { maxBytes: MAX_BATCH_BYTES + 64 * 1024 } },
  async (ctx) => {
    const session = await loadUploadSessionForCaller(ctx, ctx.params.upload_id!);
    const files = await parseUploadBatch(ctx.headers['content-type'], ctx.rawBody);
    const received = await storeUploadedFiles(session, files);
    return { data: { upload_id: session.upload_id, received, received_count: received.length } };
  },
);
