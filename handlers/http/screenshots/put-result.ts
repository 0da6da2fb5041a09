import * as z from '../../../lib/schema.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { VALIDATION_FAILED } from '../../../lib/errors/catalogue/request.ts';
import { SCREENSHOT_MEDIA_TYPE_UNSUPPORTED } from '../../../lib/errors/catalogue/sites.ts';
import { defineHandler, validationDetails } from '../../../lib/http/pipeline.ts';
import { jobForToken, recordScreenshotResult, SCREENSHOT_MAX_BYTES, type CaptureResult } from '../../../lib/screenshots/results.ts';

const failure = z.strictObject({ error: z.enum(['unreachable', 'timeout']), http_status: z.int().check(z.gte(0), z.lte(599)) });

function captureHttpStatus(value: string | undefined): number | null {
  if (value === undefined) return null;
  const status = /^\d{3}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!(status >= 100 && status <= 599)) {
    throw new ApiError(VALIDATION_FAILED, {
      details: { fields: [{ field: 'headers.x-capture-http-status', message: 'An HTTP status code, 100 to 599.', code: 'custom' }] },
    });
  }
  return status;
}

export const handler = defineHandler(
  'PUT /api/v1/public/screenshots/jobs/{job_id}',
  { rawBody: { maxBytes: SCREENSHOT_MAX_BYTES } },
  async ({ params, headers, rawBody }) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1] ?? null;
    const job = await jobForToken(params.job_id!.toLowerCase(), bearer);
    const type = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    let result: CaptureResult;
    if (type === 'image/png') {
      result = { kind: 'image', png: rawBody, httpStatus: captureHttpStatus(headers['x-capture-http-status']) };
    } else if (type === 'application/json') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw new ApiError(VALIDATION_FAILED, {
          details: { fields: [{ field: 'body', message: 'The body is not JSON.', code: 'invalid_json' }] },
        });
      }
      const checked = failure.safeParse(parsed);
      if (!checked.success) throw new ApiError(VALIDATION_FAILED, { details: validationDetails(checked.error) });
      result = { kind: 'failure', error: checked.data.error, httpStatus: checked.data.http_status };
    } else {
      throw new ApiError(SCREENSHOT_MEDIA_TYPE_UNSUPPORTED, {
        details: { content_type: type || null, accepted: ['image/png', 'application/json'] },
      });
    }
    await recordScreenshotResult(job, result);
    return { data: { message: 'Result recorded', job_id: job.id } };
  },
);
