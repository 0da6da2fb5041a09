import { finalizeUpload } from '../../../lib/deployments/publish.ts';
import { ApiError } from '../../../lib/http/errors.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { authorizeResourceTeam } from '../../../lib/projects/access.ts';
import { UUID_PATTERN } from '../../../lib/teams/slug.ts';
import { getUploadSession } from '../../../lib/uploads/sessions.ts';

export const handler = defineHandler('POST /api/v1/uploads/{upload_id}/finalize', {}, async (ctx) => {
  const uploadId = ctx.params.upload_id!;
  const session = UUID_PATTERN.test(uploadId) ? await getUploadSession(uploadId.toLowerCase()) : null;
  if (!session) throw new ApiError('UPLOAD_NOT_FOUND');
  await authorizeResourceTeam(ctx, session.team_id, 'UPLOAD_NOT_FOUND');
  return { data: await finalizeUpload(session) };
});
