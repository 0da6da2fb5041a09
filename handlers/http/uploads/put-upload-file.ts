import { defineHandler } from '../../../lib/http/pipeline.ts';
import { authorizeResourceTeam } from '../../../lib/projects/access.ts';
import { ApiError } from '../../../lib/http/errors.ts';
import { MAX_FILE_BYTES } from '../../../lib/plans.ts';
import { UUID_PATTERN } from '../../../lib/teams/slug.ts';
import { expectedFile, putUploadFile } from '../../../lib/uploads/files.ts';
import { getUploadSession } from '../../../lib/uploads/sessions.ts';

export const handler = defineHandler(
  'PUT /api/v1/uploads/{upload_id}/files/{hash}',
  { rawBody: { maxBytes: MAX_FILE_BYTES } },
  async (ctx) => {
    const uploadId = ctx.params.upload_id!;
    if (!UUID_PATTERN.test(uploadId)) throw new ApiError('UPLOAD_NOT_FOUND');
    // Both reads need only the path: made together, the expected-file one used only once the caller passed.
    const expected = expectedFile(uploadId.toLowerCase(), ctx.params.hash!);
    expected.catch(() => undefined);
    const session = await getUploadSession(uploadId.toLowerCase());
    if (!session) throw new ApiError('UPLOAD_NOT_FOUND');
    await authorizeResourceTeam(ctx, session.team_id, 'UPLOAD_NOT_FOUND');
    return { data: await putUploadFile(session, ctx.params.hash!, ctx.rawBody, expected) };
  },
);
