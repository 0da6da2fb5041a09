import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import type { TestPlatform } from './platform.ts';

/**
 * `npm run dev` as a developer runs it, in a process group of its own so that
 * a test can send what a terminal sends (Ctrl-C reaches the whole group) or
 * kill it all.
 */
export interface DevProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** What it printed up to the line naming the API. */
  output: string;
  /** Everything it printed so far (stdout and stderr). */
  log(): string;
}

export function startDev(env: Record<string, string>, args: string[] = []): Promise<DevProcess> {
  const proc = spawn('npm', ['run', 'dev', ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd: process.cwd(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '0', ...env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`npm run dev did not start: ${out}`)), 90_000);
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Press Ctrl-C to stop/.test(out) ? /API:\s+(http:\/\/localhost:(\d+))\/api\/v1/.exec(out) : null;
      if (match) {
        clearTimeout(timer);
        resolve({ child: proc, baseUrl: match[1]!, port: Number(match[2]), output: out, log: () => out });
      }
    });
    proc.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm run dev exited (${code}): ${out}`));
    });
  });
}

export function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-proc.pid!, signal);
  } catch {
    // Gone already.
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ctrl-C at the terminal: SIGINT to the whole group, then waits until every process of it is gone (npm
 * itself exits at once; the platform and its moto_server finish their stop after it). False if they outlive
 * `ms`.
 */
export async function interrupt(proc: ChildProcess, ms = 60_000): Promise<boolean> {
  signalGroup(proc, 'SIGINT');
  const deadline = Date.now() + ms;
  while (groupAlive(proc.pid!)) {
    if (Date.now() > deadline) {
      // What outlived the stop, for the failure's report.
      process.stderr.write(execFileSync('ps', ['-o', 'pid,stat,etime,cmd', '-g', String(proc.pid)]).toString());
      return false;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** The API of a platform started by startDev, as TestPlatform['api'] calls it. */
export function apiOf(baseUrl: string): TestPlatform['api'] {
  return async (method, path, { token, body, rawBody, headers: extra = {} } = {}) => {
    const headers: Record<string, string> = { ...extra };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body !== undefined ? JSON.stringify(body) : rawBody });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON.
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}
