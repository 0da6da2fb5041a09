import { sendUploadRequests, type UploadRequest, uploadRequests } from '../../lib/upload-requests.ts';
import { missingPageLoads, missingPageLoadsSentence } from '../../lib/publishing/page-references.ts';
import { ApiError, type ApiClient, type Reply } from './api.ts';

/**
 * Deploying a folder from the browser, as the CLI does: hash every file
 * (SHA-256 in the browser), open an upload session with the manifest, send
 * only the files the platform lacks (small ones many to a multipart request,
 * larger ones one to a PUT, the largest by upload URL: the CLI's requests,
 * lib/upload-requests.ts), then finalize.
 */
export interface PickedFile {
  path: string;
  file: File;
}

export interface DeployProgress {
  phase: 'hashing' | 'uploading' | 'publishing' | 'done';
  done: number;
  total: number;
}

/** Requests in flight at once: enough to fill the line, few enough for the API's per-team limits. */
const UPLOAD_CONCURRENCY = 4;

/** When one folder is picked or dropped, its own name is not part of the site's paths. */
function stripCommonFolder(files: PickedFile[]): PickedFile[] {
  const firsts = new Set(files.map((f) => f.path.split('/')[0]));
  if (firsts.size !== 1 || files.some((f) => !f.path.includes('/'))) return files;
  return files.map((f) => ({ ...f, path: f.path.slice(f.path.indexOf('/') + 1) }));
}

/**
 * Files of an `<input type=file webkitdirectory>`: each keeps its path below the picked folder (its
 * webkitRelativePath starts with the folder's own name, which is not part of the site's paths).
 */
export function filesFromInput(list: FileList): PickedFile[] {
  return [...list].map((file) => {
    const relative = file.webkitRelativePath;
    return { path: relative.includes('/') ? relative.slice(relative.indexOf('/') + 1) : file.name, file };
  });
}

/**
 * Why the picked files cannot be a whole site, or null: the index.html at their top loads files that are
 * not among them (a folder flattened, or picked without its assets/), which would publish a blank page.
 */
export async function incompleteSiteReason(files: PickedFile[]): Promise<string | null> {
  const index = files.find((f) => f.path === 'index.html');
  if (!index) return null;
  const paths = new Set(files.map((f) => f.path));
  const missing = missingPageLoads(await index.file.text(), (path) => paths.has(path));
  return missing.length > 0 ? missingPageLoadsSentence(missing) : null;
}

function readEntries(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}

async function walk(entry: FileSystemEntry, prefix: string, out: PickedFile[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ path: `${prefix}${entry.name}`, file });
    return;
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers in chunks until it answers none.
  for (let chunk = await readEntries(reader); chunk.length > 0; chunk = await readEntries(reader)) {
    for (const child of chunk) await walk(child, `${prefix}${entry.name}/`, out);
  }
}

/** Files of a drop: folders walked through their entries, loose files by name. */
export async function filesFromDrop(data: DataTransfer): Promise<PickedFile[]> {
  const entries = [...data.items].map((item) => item.webkitGetAsEntry?.() ?? null);
  const out: PickedFile[] = [];
  if (entries.every((e) => e !== null)) {
    for (const entry of entries) await walk(entry!, '', out);
  } else {
    for (const file of data.files) out.push({ path: file.name, file });
  }
  return stripCommonFolder(out);
}

async function sha256Hex(file: File): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

interface Hashed extends PickedFile {
  hash: string;
  size: number;
}

/** Sends one request of the upload with what the browser has: the picked `File`s, `fetch`, `FormData`. */
async function sendRequest(api: ApiClient, request: UploadRequest<Hashed>): Promise<void> {
  const [only] = request.files;
  if (request.kind === 'storage') {
    const target = await api.post<{ url: string; headers: Record<string, string> }>(request.uploadUrl, {});
    const put = await fetch(target.url, { method: 'PUT', headers: target.headers, body: only.file });
    if (!put.ok)
      throw new ApiError(
        put.status,
        'UPLOAD_STORAGE_REFUSED',
        `Storage refused ${only.path} (HTTP ${put.status}). Try again, or deploy it with the CLI.`,
      );
    await api.post(request.completeUrl, {});
  } else if (request.kind === 'put') {
    await api.call('PUT', request.url, {
      rawBody: only.file,
      headers: { 'content-type': 'application/octet-stream' },
    });
  } else {
    const form = new FormData();
    for (const file of request.files) form.append(file.hash, file.file, file.path.split('/').pop());
    await api.call('POST', request.url, { rawBody: form });
  }
}

async function sendMissing(
  api: ApiClient,
  uploadId: string,
  byHash: Map<string, Hashed>,
  onProgress: (p: DeployProgress) => void,
  hashes: string[],
) {
  const toSend = [...new Set(hashes)].map((h) => byHash.get(h)).filter((f): f is Hashed => f !== undefined);
  const total = toSend.reduce((sum, f) => sum + f.size, 0);
  let sent = 0;
  onProgress({ phase: 'uploading', done: 0, total });
  await sendUploadRequests(
    uploadRequests(uploadId, toSend),
    UPLOAD_CONCURRENCY,
    (request) => sendRequest(api, request),
    (request) => {
      sent += request.files.reduce((sum, f) => sum + f.size, 0);
      onProgress({ phase: 'uploading', done: sent, total });
    },
  );
}

export interface DeployTarget {
  projectId?: string;
  newProject?: { name: string; subdomain?: string };
}

export async function deployFolder(
  api: ApiClient,
  target: DeployTarget,
  picked: PickedFile[],
  onProgress: (p: DeployProgress) => void,
): Promise<Reply<'/api/v1/uploads/{upload_id}/finalize', 'post'>> {
  const hashed: Hashed[] = [];
  for (const [i, f] of picked.entries()) {
    onProgress({ phase: 'hashing', done: i, total: picked.length });
    hashed.push({ ...f, hash: await sha256Hex(f.file), size: f.file.size });
  }
  const manifest = hashed.map((f) => ({ path: f.path, hash: f.hash, size: f.size }));
  const session = target.projectId
    ? await api.post<Reply<'/api/v1/projects/{id}/uploads', 'post'>>(`/projects/${encodeURIComponent(target.projectId)}/uploads`, {
        files: manifest,
      })
    : await api.post<Reply<'/api/v1/uploads', 'post'>>('/uploads', { files: manifest, project: target.newProject });
  const byHash = new Map(hashed.map((f) => [f.hash, f]));
  await sendMissing(api, session.upload_id, byHash, onProgress, session.missing);
  onProgress({ phase: 'publishing', done: 0, total: 1 });
  const finalize = () =>
    api.post<Reply<'/api/v1/uploads/{upload_id}/finalize', 'post'>>(`/uploads/${encodeURIComponent(session.upload_id)}/finalize`, {});
  let result;
  try {
    result = await finalize();
  } catch (error) {
    // Bytes held at begin can be gone by finalize (their project was deleted meanwhile): send them, once.
    const missing =
      (error as ApiError).code === 'UPLOAD_INCOMPLETE' ? ((error as ApiError).details as { missing?: string[] })?.missing : null;
    if (!missing?.length) throw error;
    await sendMissing(api, session.upload_id, byHash, onProgress, missing);
    result = await finalize();
  }
  onProgress({ phase: 'done', done: 1, total: 1 });
  return result;
}
