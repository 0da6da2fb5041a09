import { createHash, randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import type { TestPlatform } from './platform.ts';

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

export interface SiteFiles {
  files: { path: string; hash: string; size: number }[];
  bytes: Map<string, Buffer>;
}

/** A small publishable site: path -> content. */
export function site(contents: Record<string, string | Buffer>): SiteFiles {
  const files: SiteFiles['files'] = [];
  const bytes = new Map<string, Buffer>();
  for (const [path, content] of Object.entries(contents)) {
    const buf = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const hash = sha256(buf);
    files.push({ path, hash, size: buf.length });
    bytes.set(hash, buf);
  }
  return { files, bytes };
}

/** A site whose content no other test shares, so no team already holds its blobs. */
export function uniqueSite(extra: Record<string, string> = {}): SiteFiles {
  const tag = randomBytes(8).toString('hex');
  return site({ 'index.html': `<h1>${tag}</h1>`, 'css/site.css': `body{--tag:"${tag}"}`, ...extra });
}

export const uniqueName = (prefix = 'Site') => `${prefix} ${randomBytes(4).toString('hex')}`;

/** Begin with a new project, PUT every missing file, finalize: what `slipway deploy` does. */
export async function deploy(
  platform: TestPlatform,
  token: string,
  s: SiteFiles,
  project: { name: string; subdomain?: string },
  headers: Record<string, string> = {},
) {
  const begin = await platform.api('POST', '/api/v1/uploads', { token, body: { files: s.files, project }, headers });
  if (begin.status !== 201) throw new Error(`begin: ${begin.status} ${begin.text}`);
  await putMissing(platform, token, begin.body.data.upload_id, begin.body.data.missing, s);
  const fin = await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token });
  if (fin.status !== 200) throw new Error(`finalize: ${fin.status} ${fin.text}`);
  return { begin: begin.body.data, finalize: fin.body.data };
}

export async function putMissing(platform: TestPlatform, token: string, uploadId: string, missing: string[], s: SiteFiles) {
  for (const hash of missing) {
    const put = await platform.api('PUT', `/api/v1/uploads/${uploadId}/files/${hash}`, {
      token,
      rawBody: s.bytes.get(hash)!,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (put.status !== 200) throw new Error(`put: ${put.status} ${put.text}`);
  }
}

/** A multipart/form-data body as fetch would send it: each part a file named by `name`, or a plain field. */
export async function multipartBody(parts: { name: string; bytes: Buffer | string; field?: boolean }[]) {
  const form = new FormData();
  for (const part of parts) {
    if (part.field) form.append(part.name, String(part.bytes));
    else form.append(part.name, new Blob([Buffer.from(part.bytes)]), part.name);
  }
  const request = new Request('http://multipart.invalid/', { method: 'POST', body: form });
  return { contentType: request.headers.get('content-type')!, body: Buffer.from(await request.arrayBuffer()) };
}

/** POST /api/v1/uploads/{upload_id}/files with these hashes' bytes from the site. */
export async function postBatch(
  platform: TestPlatform,
  token: string | undefined,
  uploadId: string,
  parts: { name: string; bytes: Buffer | string; field?: boolean }[],
) {
  const { contentType, body } = await multipartBody(parts);
  return platform.api('POST', `/api/v1/uploads/${uploadId}/files`, { token, rawBody: body, headers: { 'content-type': contentType } });
}

/** Whether the sites bucket holds `{team_id}/{slug}/{deployment_id}/{path}` (the platform's own S3 client and endpoint). */
export async function deployedObjectExists(
  teamId: string,
  session: { deployment_id: string; project: { slug: string } },
  path: string,
): Promise<boolean> {
  const key = `${teamId}/${session.project.slug}/${session.deployment_id}/${path}`;
  return s3()
    .send(new HeadObjectCommand({ Bucket: config.bucket('sites'), Key: key }))
    .then(
      () => true,
      () => false,
    );
}
