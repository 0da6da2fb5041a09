import { createReadStream } from 'node:fs';
import { sendUploadRequests, uploadRequests, type UploadRequest } from '../upload-requests.ts';
import type { ApiClient } from './api-client.ts';
import { multipartForm } from './http.ts';
import type { SiteFile } from './site-file.ts';
import type { UploadProgress } from './upload-progress.ts';

/** Upload requests in flight at once, by default. */
export const UPLOAD_CONCURRENCY = 8;

/**
 * Sends files to an upload session: small ones many to a request
 * (POST .../files, multipart), larger ones one to a PUT, the largest straight
 * to storage by upload URL; a bounded number at once. A retried request sends
 * its files again from the disk.
 */
export class FileSender {
  filesSent = 0;
  bytesSent = 0;
  private readonly concurrency: number;

  constructor(
    private readonly api: ApiClient,
    private readonly uploadId: string,
    concurrency: number | undefined,
    private readonly progress: UploadProgress,
  ) {
    this.concurrency = Math.max(1, concurrency ?? UPLOAD_CONCURRENCY);
  }

  async send(files: SiteFile[]): Promise<void> {
    await sendUploadRequests(
      uploadRequests(this.uploadId, files),
      this.concurrency,
      (request) => this.sendRequest(request),
      (request) => {
        for (const file of request.files) {
          this.filesSent++;
          this.bytesSent += file.size;
          this.progress.fileSent(file.size);
        }
      },
    );
  }

  private async sendRequest(request: UploadRequest<SiteFile>): Promise<void> {
    if (request.kind === 'storage') {
      const [file] = request.files;
      const target = await this.api.call<{ url: string; headers: Record<string, string> }>('POST', `/api/v1${request.uploadUrl}`, {
        json: {},
      });
      await this.api.putToStorage(target.url, target.headers, () => createReadStream(file.absolute));
      await this.api.call('POST', `/api/v1${request.completeUrl}`, { json: {} });
    } else if (request.kind === 'put') {
      const [file] = request.files;
      await this.api.call('PUT', `/api/v1${request.url}`, {
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(file.size) },
        // A fresh stream per attempt: a retried upload reads the file again from the start.
        body: () => ({ body: createReadStream(file.absolute) }),
      });
    } else {
      // Read from the disk when sent, again on a retry.
      await this.api.call('POST', `/api/v1${request.url}`, {
        body: async () => {
          const form = await multipartForm(request.files.map((file) => ({ name: file.hash, absolute: file.absolute })));
          return { body: form.body, headers: { 'content-type': form.contentType } };
        },
      });
    }
  }
}
