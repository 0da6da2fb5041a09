import { MAX_BATCH_BYTES, MAX_BATCH_FILES, MAX_INLINE_FILE_BYTES } from './plans.ts';

/**
 * The one upload client's core, shared by the CLI (lib/cli/file-sender.ts) and
 * the console (dashboard/src/upload.ts): which request carries which missing
 * file, at which address, and how many go at once. Each side only says how to
 * send one request with what it has: the CLI streams files from the disk
 * through its retrying client, the browser sends `File` objects with `fetch`.
 * No Node or browser API here, so both bundle it.
 */

/** Files this small travel in batches; a larger one gets a PUT of its own. */
export const BATCH_FILE_MAX_BYTES = 1024 * 1024;

export interface FileToSend {
  hash: string;
  size: number;
}

/**
 * One request of an upload: many small files in one multipart POST, a larger
 * file in a PUT of its own, or one too large for the API (lib/plans.ts)
 * straight to storage by upload URL, then checked.
 */
export type UploadRequest<F extends FileToSend> =
  | { kind: 'batch'; files: F[]; url: string }
  | { kind: 'put'; files: [F]; url: string }
  | { kind: 'storage'; files: [F]; uploadUrl: string; completeUrl: string };

/**
 * The requests that send `files` (each once) to an upload session, under the platform's per-request limits.
 * Their addresses are paths below `/api/v1`, as both clients' `call` take them.
 */
export function uploadRequests<F extends FileToSend>(uploadId: string, files: F[]): UploadRequest<F>[] {
  const base = `/uploads/${encodeURIComponent(uploadId)}/files`;
  const requests: UploadRequest<F>[] = [];
  let batch: F[] = [];
  let batchBytes = 0;
  const flush = () => {
    if (batch.length > 0) requests.push({ kind: 'batch', files: batch, url: base });
    batch = [];
    batchBytes = 0;
  };
  for (const file of files) {
    if (file.size > MAX_INLINE_FILE_BYTES) {
      requests.push({
        kind: 'storage',
        files: [file],
        uploadUrl: `${base}/${file.hash}/upload-url`,
        completeUrl: `${base}/${file.hash}/complete`,
      });
      continue;
    }
    if (file.size > BATCH_FILE_MAX_BYTES) {
      requests.push({ kind: 'put', files: [file], url: `${base}/${file.hash}` });
      continue;
    }
    if (batch.length === MAX_BATCH_FILES || batchBytes + file.size > MAX_BATCH_BYTES) flush();
    batch.push(file);
    batchBytes += file.size;
  }
  flush();
  return requests;
}

/**
 * Sends the requests, `concurrency` at once, calling `onSent` after each. The
 * first failure is the result: requests in flight finish, no new one starts.
 */
export async function sendUploadRequests<F extends FileToSend>(
  requests: UploadRequest<F>[],
  concurrency: number,
  send: (request: UploadRequest<F>) => Promise<void>,
  onSent: (request: UploadRequest<F>) => void,
): Promise<void> {
  const queue = [...requests];
  let failed = false;
  const worker = async () => {
    for (let request = queue.shift(); request && !failed; request = queue.shift()) {
      try {
        await send(request);
      } catch (error) {
        failed = true;
        throw error;
      }
      onSent(request);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, requests.length)) }, worker));
}
