import { createReadStream } from 'node:fs';
import pLimit from 'p-limit';
import { MAX_BATCH_BYTES, MAX_BATCH_FILES, MAX_INLINE_FILE_BYTES } from '../plans.ts';
import type { ApiClient } from './api-client.ts';
import { multipartForm } from './http.ts';
import type { SiteFile } from './site-file.ts';
import type { UploadProgress } from './upload-progress.ts';

/** Upload requests in flight at once, by default. */
export const UPLOAD_CONCURRENCY = 8;

/** Files this small travel in batches; a larger one gets a PUT of its own. */
const BATCH_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Sends files to an upload session: small ones many to a request
 * (POST .../files, multipart), larger ones one to a PUT, the largest straight
 * to storage by upload URL; a bounded number at once. A retried request sends
 * its files again from the disk.
 */
export class FileSender {
  filesSent = 0;
  bytesSent = 0;
  private readonly limit;

  constructor(
    private readonly api: ApiClient,
    private readonly uploadId: string,
    concurrency: number | undefined,
    private readonly progress: UploadProgress,
  ) {
    this.limit = pLimit(Math.max(1, concurrency ?? UPLOAD_CONCURRENCY));
  }

  async send(files: SiteFile[]): Promise<void> {
    const requests: SiteFile[][] = [];
    let batch: SiteFile[] = [];
    let batchBytes = 0;
    for (const file of files) {
      if (file.size > BATCH_FILE_MAX_BYTES) {
        requests.push([file]);
        continue;
      }
      if (batch.length === MAX_BATCH_FILES || batchBytes + file.size > MAX_BATCH_BYTES) {
        requests.push(batch);
        batch = [];
        batchBytes = 0;
      }
      batch.push(file);
      batchBytes += file.size;
    }
    if (batch.length > 0) requests.push(batch);
    const base = `/api/v1/uploads/${encodeURIComponent(this.uploadId)}/files`;
    try {
      await Promise.all(
        requests.map((group) =>
          this.limit(async () => {
            if (group.length === 1 && group[0]!.size > MAX_INLINE_FILE_BYTES) {
              // Too large for the API (lib/plans.ts): straight to storage by upload URL, then checked.
              const file = group[0]!;
              const target = await this.api.call<{ url: string; headers: Record<string, string> }>(
                'POST',
                `${base}/${file.hash}/upload-url`,
                { json: {} },
              );
              await this.api.putToStorage(target.url, target.headers, () => createReadStream(file.absolute));
              await this.api.call('POST', `${base}/${file.hash}/complete`, { json: {} });
            } else if (group.length === 1 && group[0]!.size > BATCH_FILE_MAX_BYTES) {
              const file = group[0]!;
              await this.api.call('PUT', `${base}/${file.hash}`, {
                headers: { 'content-type': 'application/octet-stream', 'content-length': String(file.size) },
                // A fresh stream per attempt: a retried upload reads the file again from the start.
                body: () => ({ body: createReadStream(file.absolute) }),
              });
            } else {
              // Read from the disk when sent, again on a retry.
              await this.api.call('POST', base, {
                body: async () => {
                  const form = await multipartForm(group.map((file) => ({ name: file.hash, absolute: file.absolute })));
                  return { body: form.body, headers: { 'content-type': form.contentType } };
                },
              });
            }
            for (const file of group) {
              this.filesSent++;
              this.bytesSent += file.size;
              this.progress.fileSent(file.size);
            }
          }),
        ),
      );
    } finally {
      this.limit.clearQueue();
    }
  }
}
