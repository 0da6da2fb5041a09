import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { contentTypeFor } from '../deployments/content-type.ts';
import { compressReply } from '../sites/compression.ts';
import { bundleFunctionInFolder, functionEntries, INVALID_NAME_LINE } from '../functions/build.ts';
import { functionLabel, MAX_FUNCTION_LABEL_LENGTH, type DeployedFunction } from '../functions/model.ts';
import { functionUrl } from '../functions/records.ts';
import { functionHostnameLabel } from '../functions/resolve.ts';
import { PlatformEnv, startPlatformEnv } from '../config.ts';
import { logger } from '../logger.ts';
import type { RouteManifestFile } from '../sites/route-manifest.ts';
import {
  compileServingRules,
  HEADERS_FILE,
  REDIRECTS_FILE,
  servingRulesMatcher,
  type ServingRulesMatcher,
} from '../sites/serving-rules.ts';
import { serveSiteFiles, type SiteFiles } from '../sites/site-files.ts';
import type { HostnameHandler } from './api-server.ts';
import { localFunctionsRuntime } from './functions-runtime.ts';

/**
 * `slipway dev [folder]`: a site folder and its `functions/` served on this
 * machine as they would be once deployed, with no platform, account or AWS
 * endpoint. The site goes through the serving rules of lib/sites/site-files.ts
 * (read from the folder at each request, so a saved file is served at once);
 * each function is built by the build's own bundling (lib/functions/build.ts)
 * and answered through the same door and sandboxed runner as the local
 * platform's (lib/local/functions-runtime.ts), rebuilt when a file under
 * functions/ or node_modules/ changes. The door waits for a rebuild in
 * progress, so the first request after a save gets the new code.
 */
export interface DevSiteOptions {
  dir: string;
  /** The label the site would have once deployed: `{subdomain}.localhost`, `{name}-{subdomain}.fn.localhost`. */
  subdomain: string;
  /** 0 picks a free port. */
  port: number;
  /** Each build-log line and each console line of a function. */
  onLog?: (line: string) => void;
  /** The folder whose functions/ is served (lib/cli/function-sources.ts): `dir` unless the app's is. */
  functionsBase?: string;
}

export interface DevSite {
  port: number;
  siteUrl: string;
  functions(): { name: string; url: string }[];
  /** Resolves when the build in progress (if any) is done. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** What the deploy leaves out of a folder is not served here either. */
const SKIPPED_SEGMENTS = new Set(['.git', 'node_modules']);

/**
 * The folder's `_redirects` and `_headers`, compiled by the publish step's own code whenever either file's stat
 * facts change (so an edit applies to the next request, no restart); each skipped line is logged once per edit.
 */
function folderRules(dir: string, log: (line: string) => void): () => ServingRulesMatcher | null {
  let stamp = '';
  let matcher: ServingRulesMatcher | null = null;
  const read = (name: string) => {
    const info = statSync(join(dir, name), { throwIfNoEntry: false });
    return info?.isFile() ? { stamp: `${info.ino}:${info.size}:${info.mtimeMs}`, text: () => readFileSync(join(dir, name), 'utf8') } : null;
  };
  return () => {
    const redirects = read(REDIRECTS_FILE);
    const headers = read(HEADERS_FILE);
    const now = `${redirects?.stamp ?? '-'}|${headers?.stamp ?? '-'}`;
    if (now === stamp) return matcher;
    stamp = now;
    const rules = compileServingRules({ redirects: redirects?.text() ?? null, headers: headers?.text() ?? null });
    for (const skipped of rules.skipped) log(`[rules] ${skipped.file} line ${skipped.line} skipped: ${skipped.reason}`);
    matcher = rules.redirects.length > 0 || rules.headers.length > 0 ? servingRulesMatcher(rules) : null;
    return matcher;
  };
}

/** A folder as the serving rules see a deployment: files by path, hashed when their stat facts change. */
function folderFiles(dir: string, log: (line: string) => void): SiteFiles {
  const known = new Map<string, { stamp: string; file: RouteManifestFile; bytes: Buffer }>();
  const load = (path: string) => {
    const absolute = join(dir, ...path.split('/'));
    const info = statSync(absolute, { throwIfNoEntry: false });
    if (!info?.isFile()) return null;
    const stamp = `${info.ino}:${info.size}:${info.mtimeMs}`;
    const seen = known.get(path);
    if (seen?.stamp === stamp) return seen;
    const bytes = readFileSync(absolute);
    const hash = createHash('sha256').update(bytes).digest('hex');
    const entry = { stamp, bytes, file: { hash, size: bytes.length, content_type: contentTypeFor(path) } };
    known.set(path, entry);
    return entry;
  };
  const servable = (path: string) => !path.split('/').some((segment) => SKIPPED_SEGMENTS.has(segment)) && !path.endsWith('.DS_Store');
  return {
    root: '',
    has: (path) => servable(path) && load(path) !== null,
    file: (path) => load(path)!.file,
    hasFunctions: () => statSync(join(dir, 'functions'), { throwIfNoEntry: false })?.isDirectory() ?? false,
    read: async (path) => load(path)?.bytes ?? Buffer.alloc(0),
    rules: folderRules(dir, log),
  };
}

interface Built {
  fn: DeployedFunction;
  code: Buffer;
}

/** Builds every function of the folder; a function whose build fails keeps answering with its last good build. */
async function buildFunctions(
  dir: string,
  subdomain: string,
  previous: Map<string, Built>,
  log: (line: string) => void,
): Promise<Map<string, Built>> {
  let names: string[] = [];
  try {
    names = readdirSync(join(dir, 'functions'));
  } catch {
    return new Map();
  }
  const { entries, problems } = functionEntries(
    names.map((name) => `functions/${name}`),
    '',
  );
  if (problems.length > 0) [INVALID_NAME_LINE, ...problems].forEach(log);
  const next = new Map<string, Built>();
  await Promise.all(
    entries.map(async (entry) => {
      const label = functionLabel(entry.name, subdomain);
      if (label.length > MAX_FUNCTION_LABEL_LENGTH) {
        log(
          `[functions] Build failed: hostname label ${label} is ${label.length} characters; ` +
            `{name}-{subdomain} must fit in ${MAX_FUNCTION_LABEL_LENGTH}`,
        );
        return;
      }
      // Packages from a node_modules/ above the folder too: `slipway deploy` of the folder sends them.
      const result = await bundleFunctionInFolder(dir, entry, '', { packagesAbove: true });
      if ('log' in result) {
        result.log.forEach(log);
        const kept = previous.get(entry.name);
        if (kept) next.set(entry.name, kept);
        return;
      }
      const code = Buffer.from(result.code);
      const sha = createHash('sha256').update(code).digest('hex');
      const kept = previous.get(entry.name);
      if (kept?.fn.bundle_sha256 === sha) return void next.set(entry.name, kept);
      next.set(entry.name, {
        code,
        fn: {
          function_id: `dev-${entry.name}`,
          name: entry.name,
          project_id: 'dev',
          team_id: 'dev',
          // A new build is a new deployment to the host: new instances, the old ones left to stop when idle.
          deployment_id: `dev-${sha.slice(0, 12)}`,
          entry_path: entry.path,
          bundle_key: `dev/${entry.name}.mjs`,
          bundle_sha256: sha,
          bundle_bytes: code.length,
          created_at: new Date().toISOString(),
          subdomain,
          url: functionUrl(entry.name, subdomain),
        },
      });
      log(`[functions] Built ${entry.name} (${(code.length / 1024).toFixed(1)} KB)`);
    }),
  );
  return next;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** The dev server: the function door first (its hosts), every other request a file of the folder. */
function devServer(doorHandler: HostnameHandler, files: SiteFiles, platform: PlatformEnv): Server {
  return createServer((req, res) => {
    void platform
      .run(async () => {
        if (await doorHandler(req, res)) return;
        const request = {
          host: req.headers.host ?? '',
          path: req.url ?? '/',
          method: req.method ?? 'GET',
          headers: req.headers as Record<string, string | undefined>,
        };
        // Compressed as CloudFront compresses a deployed site (lib/sites/compression.ts).
        const reply = await compressReply(await serveSiteFiles(request, files), req.headers['accept-encoding']);
        res.writeHead(reply.status, reply.headers);
        if (reply.body === null || Buffer.isBuffer(reply.body)) res.end(reply.body ?? undefined);
        else await pipeline(reply.body, res);
      })
      .catch((error: unknown) => {
        logger.error('slipway dev: a request failed', { error: (error as Error).message });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal_error\n');
        else res.destroy();
      });
  });
}

export async function startDevSite(options: DevSiteOptions): Promise<DevSite> {
  // Its own configuration (lib/config.ts), filled in once the port is known; what it starts runs inside it.
  const owned: Record<string, string> = {};
  const platform = new PlatformEnv(owned);
  return platform.run(() => start(options, platform, owned));
}

async function start(options: DevSiteOptions, platform: PlatformEnv, owned: Record<string, string>): Promise<DevSite> {
  const log = options.onLog ?? ((line: string) => process.stdout.write(`${line}\n`));
  const functionsBase = options.functionsBase ?? options.dir;
  let built = new Map<string, Built>();
  let building: Promise<void> = Promise.resolve();
  /** A file the functions are built from changed since the last build began. */
  let dirty = false;
  let timer: NodeJS.Timeout | null = null;

  const runtime = localFunctionsRuntime({
    telemetry: false,
    isEnrolled: async () => true,
    resolve: async (host) => {
      // A request right after a save builds at once rather than wait for the watcher's pause.
      await (dirty ? rebuild() : building);
      const label = functionHostnameLabel(host);
      return [...built.values()].find(({ fn }) => functionLabel(fn.name, fn.subdomain) === label)?.fn ?? null;
    },
    loadBundle: async (fn) => [...built.values()].find((b) => b.fn.bundle_sha256 === fn.bundle_sha256)?.code ?? Buffer.alloc(0),
    onConsole: (fn, stream, line) => log(`[${fn.name}] ${stream === 'stderr' ? 'stderr ' : ''}${line}`),
  });
  const server = devServer(runtime.hostnameHandler, folderFiles(options.dir, log), platform);
  const port = await listen(server, options.port);
  // The serving and door rules read these (lib/config.ts): the addresses a deployed site would have, on this port.
  Object.assign(owned, {
    SITE_DOMAIN: 'localhost',
    FUNCTION_DOMAIN: 'fn.localhost',
    PUBLIC_SCHEME: 'http',
    PUBLIC_PORT_SUFFIX: `:${port}`,
    // Each request asks for the function anew: a rebuild answers at once.
    FUNCTIONS_ROUTE_CACHE_MS: '0',
  });
  // Outside its calls too (the CLI prints its functions' addresses), as the local platform is.
  const released = startPlatformEnv(platform);

  function rebuild(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!dirty) return building;
    dirty = false;
    building = building.then(async () => {
      try {
        built = await buildFunctions(functionsBase, options.subdomain, built, log);
      } catch (error) {
        // The functions that answered keep answering; the next save builds again.
        log(`[functions] Build failed: ${(error as Error).message}`);
      }
    });
    return building;
  }

  dirty = true;
  await rebuild();
  runtime.driver.start();

  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(functionsBase, { recursive: true }, (_event, name) => {
      const path = String(name ?? '').replace(/\\/g, '/');
      if (!path.startsWith('functions/') && !path.startsWith('node_modules/')) return;
      dirty = true;
      // Editors save in several steps: one build for the lot, soon after the last (or at the next request).
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => void rebuild(), 10);
    });
  } catch (error) {
    log(`Watching ${functionsBase} failed (${(error as Error).message}); restart slipway dev after editing a function.`);
  }

  return {
    port,
    siteUrl: `http://${options.subdomain}.localhost:${port}/`,
    functions: () => [...built.values()].map(({ fn }) => ({ name: fn.name, url: fn.url })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    settled: () => building,
    stop: () =>
      platform.run(async () => {
        watcher?.close();
        if (timer) clearTimeout(timer);
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await runtime.driver.stop();
        released();
      }),
  };
}
