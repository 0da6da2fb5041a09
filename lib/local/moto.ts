import { spawn, type ChildProcess } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';
import { localConfig } from '../local-config.ts';

const MOTO_PYTHON_DIR = join(dirname(fileURLToPath(import.meta.url)), 'moto-python');

export class LocalPlatformError extends Error {}

export interface MotoServer {
  endpoint: string;
  stop(): Promise<void>;
}

async function waitUntilReady(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new LocalPlatformError(`moto_server exited with code ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new LocalPlatformError(`moto_server did not answer at ${endpoint} within ${timeoutMs} ms`);
}

/**
 * Starts moto's AWS wire-protocol server on a free loopback port; `env` adds moto settings (a test of request signing
 * turns its authentication on; `npm run dev` names the file its state is kept in).
 */
export async function startMoto(options: { env?: Record<string, string> } = {}): Promise<MotoServer> {
  // A moto that keeps its state saves it when stopped (lib/local/persistence.ts): give it time to write.
  const stopGraceMs = options.env?.SLIPWAY_MOTO_STATE_FILE ? 120_000 : 3000;
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      MOTO_ALLOW_NONEXISTENT_REGION: 'true',
      // moto's DynamoDB is not thread-safe; moto-python/sitecustomize.py serializes its requests (see there why).
      PYTHONPATH: [MOTO_PYTHON_DIR, localConfig.pythonPath()].filter(Boolean).join(delimiter),
      SLIPWAY_MOTO_SERIALIZE_DYNAMODB: '1',
      // moto-python/sitecustomize.py stops the server once this process is gone (killed, so no exit handler ran).
      SLIPWAY_MOTO_PARENT_PID: String(process.pid),
      ...options.env,
    },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (error) => resolve(error));
  });
  if (spawned) {
    if ((spawned as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new LocalPlatformError(
        'moto_server was not found on PATH. Install it with `pip install "moto[server]"` ' +
          '(or `apt-get install python3-moto`), or set AWS_ENDPOINT_URL to a running AWS endpoint such as LocalStack.',
      );
    }
    throw new LocalPlatformError(`moto_server could not start: ${spawned.message}`);
  }
  try {
    await waitUntilReady(endpoint, child, 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new LocalPlatformError(`${(error as Error).message}\n${stderr}`);
  }
  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), stopGraceMs).unref();
      }),
  };
}
