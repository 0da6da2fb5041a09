import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';

/** Publishes `files` (path -> content) through the upload API as a client would, and lists the project's functions. */
export async function deploySiteFiles(
  baseUrl: string,
  token: string,
  files: Record<string, string>,
  project: { name: string; subdomain: string },
): Promise<{ projectId: string; functions: { name: string; bundle_bytes: number }[] }> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const entries = Object.entries(files).map(([path, content]) => {
    const bytes = Buffer.from(content);
    return { path, bytes, hash: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
  });
  const begin = await fetch(`${baseUrl}/api/v1/uploads`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ files: entries.map(({ path, hash, size }) => ({ path, hash, size })), project }),
  });
  const session = ((await begin.json()) as { data: { upload_id: string; project_id: string; missing: string[] } }).data;
  for (const hash of session.missing) {
    const file = entries.find((e) => e.hash === hash)!;
    const put = await fetch(`${baseUrl}/api/v1/uploads/${session.upload_id}/files/${hash}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: file.bytes,
    });
    if (put.status !== 200) throw new Error(`PUT ${file.path}: ${put.status} ${await put.text()}`);
  }
  const finalize = await fetch(`${baseUrl}/api/v1/uploads/${session.upload_id}/finalize`, { method: 'POST', headers });
  if (finalize.status !== 200) throw new Error(`finalize: ${finalize.status} ${await finalize.text()}`);
  const listed = await fetch(`${baseUrl}/api/v1/projects/${session.project_id}/functions`, { headers });
  const functions = ((await listed.json()) as { data: { functions: { name: string; bundle_bytes: number }[] } }).data.functions;
  return { projectId: session.project_id, functions };
}

/**
 * A door and an instance in two processes of their own (ES module scripts): the instance first, which prints a
 * line once it listens on `socketPath`; then the door, which prints the port it listens on. `stop` ends both and
 * removes the socket.
 */
export async function startPair(
  instance: string,
  door: string,
  socketPath: string,
): Promise<{ port: number; stop: () => void; pids: { door: number; instance: number } }> {
  const first = spawn(process.execPath, ['--input-type=module', '-e', instance], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => first.stdout.once('data', resolve));
  const second = spawn(process.execPath, ['--input-type=module', '-e', door], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => second.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  return {
    port,
    pids: { door: second.pid!, instance: first.pid! },
    stop: () => {
      second.kill();
      first.kill();
      rmSync(socketPath, { force: true });
    },
  };
}
