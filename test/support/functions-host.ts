import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { DoorForward, DoorReply, FunctionHost } from '../../lib/functions/host.ts';
import type { DeployedFunction } from '../../lib/functions/model.ts';
import { createLocalFunctionHost, type LocalFunctionHostOptions, type LocalHostEvent } from '../../lib/functions/hosts/local/local-host.ts';

/**
 * Functions for host tests: each is a plain ESM source (a valid bundle) kept
 * in memory, served to the host by its loadBundle.
 */
export function functionBundles() {
  const sources = new Map<string, Buffer>();
  const events: LocalHostEvent[] = [];
  const define = (name: string, source: string, port = 3000): DeployedFunction => {
    const bytes = Buffer.from(source);
    const sha = createHash('sha256').update(bytes).digest('hex');
    const deploymentId = randomUUID();
    const fn: DeployedFunction = {
      function_id: `fn-${name}`,
      name,
      project_id: 'project-1',
      team_id: 'team-1',
      deployment_id: deploymentId,
      entry_path: `functions/${name}.js`,
      bundle_key: `functions/team-1/project-1/${deploymentId}/${name}.mjs`,
      bundle_sha256: sha,
      bundle_bytes: bytes.length,
      created_at: new Date().toISOString(),
      subdomain: 'site',
      url: `http://${name}-site.fn.localhost:${port}/`,
    };
    sources.set(fn.bundle_key, bytes);
    return fn;
  };
  const loadBundle = async (fn: DeployedFunction) => {
    const bytes = sources.get(fn.bundle_key);
    if (!bytes) throw new Error(`no bundle ${fn.bundle_key}`);
    return bytes;
  };
  return { define, loadBundle, events };
}

export function startHost(options: Pick<LocalFunctionHostOptions, 'prefork' | 'capabilities'> = {}) {
  const bundles = functionBundles();
  const host = createLocalFunctionHost({ loadBundle: bundles.loadBundle, onEvent: (e) => bundles.events.push(e), ...options });
  return { host, ...bundles };
}

export interface Collected {
  reply: DoorReply;
  text: string;
  /** Each body chunk with the milliseconds since the request was forwarded. */
  chunks: { at: number; text: string }[];
}

/** Forwards one request and reads the whole reply body. */
export async function call(
  host: FunctionHost,
  fn: DeployedFunction,
  request: Partial<Omit<DoorForward, 'body'>> & { body?: string } = {},
  signal = new AbortController().signal,
): Promise<Collected> {
  const started = Date.now();
  const method = request.method ?? 'GET';
  const body = request.body !== undefined ? Buffer.from(request.body) : null;
  const headers: [string, string][] = [['host', new URL(fn.url).host], ...(request.headers ?? [])];
  if (body) headers.push(['content-length', String(body.length)]);
  const reply = await host.forwardHttp(
    fn,
    { method, query: request.query ?? '', headers, body: body ? Readable.from([body]) : null },
    signal,
  );
  const chunks: Collected['chunks'] = [];
  for await (const chunk of Buffer.isBuffer(reply.body) ? [reply.body] : reply.body)
    chunks.push({ at: Date.now() - started, text: Buffer.from(chunk as Buffer).toString('utf8') });
  return { reply, text: chunks.map((c) => c.text).join(''), chunks };
}

/** Rejects with the error forwardHttp rejected with, or fails when it answered. */
export async function callFails(
  host: FunctionHost,
  fn: DeployedFunction,
  request: Parameters<typeof call>[2] = {},
  signal?: AbortSignal,
): Promise<Error> {
  try {
    const collected = await call(host, fn, request, signal);
    throw new Error(`expected a failure, got ${collected.reply.status}: ${collected.text.slice(0, 200)}`);
  } catch (error) {
    return error as Error;
  }
}

/** Bundles a source as the functions build does (ESM, node22, built-ins external, the createRequire banner). */
export async function bundleAsBuild(source: string, resolveDir: string): Promise<string> {
  const { builtinModules } = await import('node:module');
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    stdin: { contents: source, resolveDir, loader: 'js', sourcefile: 'entry.js' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: ['node:*', ...builtinModules],
    banner: { js: "import {createRequire} from 'node:module'; const require = createRequire(import.meta.url);" },
    minify: true,
    keepNames: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
