import busboy from 'busboy';
import { ApiError } from '../errors/api-error.ts';
import { UNSUPPORTED_MEDIA_TYPE } from '../errors/catalogue/request.ts';
import { UPLOAD_BATCH_INVALID } from '../errors/catalogue/sites.ts';
import { MAX_BATCH_BYTES, MAX_BATCH_FILES } from '../plans.ts';
import type { UploadedFile } from './files.ts';
import { type JsonObject } from '../json.ts';

/**
 * A batch upload (POST /api/v1/uploads/{upload_id}/files) carries many small
 * files in one multipart/form-data request, each a file part named by its
 * hash: `curl -F "$HASH=@path"`. Thousands of small files then cost a few
 * hundred requests instead of thousands, each checked and authorized once.
 */

function invalid(problem: string, extra: JsonObject = {}): ApiError {
  return new ApiError(UPLOAD_BATCH_INVALID, { details: { problem, ...extra } });
}

/** The files of a multipart/form-data batch body, or the refusal that says what is wrong with it. */
export async function parseUploadBatch(contentType: string | undefined, body: Buffer): Promise<UploadedFile[]> {
  if (!/^multipart\/form-data\s*;/i.test(contentType ?? '')) {
    throw new ApiError(UNSUPPORTED_MEDIA_TYPE, {
      message: 'The request body must be multipart/form-data, one file part per file, named by its hash.',
      details: { content_type: contentType ?? null },
    });
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      // No `parts` limit: busboy reports it on reaching the limit, not on passing it; files and fields bound the parts.
      limits: { files: MAX_BATCH_FILES, fields: 0, fileSize: MAX_BATCH_BYTES },
    });
  } catch {
    throw invalid('the multipart/form-data content type has no boundary');
  }
  const files: UploadedFile[] = [];
  const done = new Promise<void>((resolve, reject) => {
    parser.on('file', (name, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => files.push({ hash: name, bytes: Buffer.concat(chunks) }));
    });
    parser.on('filesLimit', () => reject(invalid(`a batch carries at most ${MAX_BATCH_FILES} files`, { max_files: MAX_BATCH_FILES })));
    // `fields: 0`: the first form field (a part with no filename) ends the parse here.
    parser.on('fieldsLimit', () => reject(invalid('a part is a form field; send each file as a file part (curl -F "HASH=@path")')));
    parser.on('error', (error: Error) => reject(invalid(`the body is not valid multipart/form-data (${error.message})`)));
    parser.on('close', () => resolve());
  });
  parser.end(body);
  await done;
  if (files.length === 0) throw invalid('the batch has no files');
  return files;
}
