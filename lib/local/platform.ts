import { config, PlatformEnv, startPlatformEnv } from '../config.ts';
import type { LocalDriver } from './driver.ts';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { createApiServer, type ApiAnswer, type HostnameHandler, type StartGate } from './api-server.ts';
import { dashboardHostnameHandler } from './dashboard-host.ts';
import { signInLinkOf, startMailOutbox, type MailOutbox } from './mail-outbox.ts';
import { LocalPlatformError, startMoto, type MotoServer } from './moto.ts';
import { provisionResources } from './provision.ts';
import { localScheduleTargetEnv } from './scheduler-driver.ts';
import { removeLocalState, writeLocalState } from './state.ts';
import { startSynthesizedRuntime, type SynthesizedRuntime } from '../../local-cloud/runtime.ts';
import type { SynthesizedTemplate } from '../../local-cloud/template/template.ts';
import { siteAnalytics } from '../sites/analytics.ts';
import { localConfig } from '../local-config.ts';

/** A background loop playing a part AWS plays in the cloud (SQS poller, scheduler). */

export interface LocalPlatformOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Prefix of every resource name. */
  prefix: string;
  /** Use this AWS endpoint instead of starting moto_server. */
  awsEndpoint?: string;
  /** Write the state file the operator CLI reads (the dev server does; tests don't). */
  writeState?: boolean;
  /** Settings of the moto_server it starts: `npm run dev` passes those that keep its state (lib/local/persistence.ts). */
  motoEnv?: Record<string, string>;
  hostnameHandlers?: HostnameHandler[];
  drivers?: (() => LocalDriver)[];
  /** Run this cloud assembly (cdk.out) instead of the sources: the synthesized mode (local-cloud/). */
  synthesized?: { assemblyDir: string; alterTemplate?: (template: SynthesizedTemplate) => void };
  /** Told each sign-in link the platform mails (`npm run dev` prints it). */
  onSignInLink?: (email: string, url: string) => void;
  /**
   * Settings this platform has beside its own (`npm run dev`'s console origins, confirmation page), given its
   * console's origin; a value set in the process environment still wins, as before for `npm run dev`.
   */
  settings?: (urls: { consoleUrl: string }) => Record<string, string>;
  /**
   * False: code outside this platform's calls does not default to it (lib/config.ts). A test worker that lends one
   * platform to several files in turn makes it the default per file instead (test/support/platform.ts).
   */
  defaultOutsideCalls?: boolean;
}

export interface LocalPlatform {
  baseUrl: string;
  port: number;
  awsEndpoint: string;
  startedMoto: boolean;
  /**
   * What this platform owns of its configuration (resource names, domains, ports, endpoints, secrets): the
   * `owned` of `platformEnv`, by reference, so a test may point one at something else for a call.
   */
  env: Record<string, string>;
  /** Its configuration (lib/config.ts): calls made inside `platformEnv.run` are this platform's. */
  platformEnv: PlatformEnv;
  /** The synthesized mode's runtime (its Lambdas, their permission usage); null in the source mode. */
  synthesized: SynthesizedRuntime | null;
  /** The console: http://app.localhost:PORT. */
  consoleUrl: string;
  /** The mail the platform sent (nothing is delivered locally). */
  outbox: MailOutbox;
  stop(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new LocalPlatformError(
            `Port ${port} is already in use. Stop whatever uses it, or start on another port: PORT=${port + 1} npm run dev`,
          ),
        );
      } else if (error.code === 'EACCES') {
        reject(new LocalPlatformError(`Port ${port} needs privileges this user lacks; pick a port above 1024 with PORT.`));
      } else reject(error);
    });
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Settings given to the platform, except where the process environment sets the name (the developer's choice wins). */
function settingsUnlessSet(settings: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(settings).filter(([name]) => !localConfig.variable(name)));
}

/** What a local platform owns beside its resources: its endpoints, domains, ports and per-run secrets. */
function ownSettings(endpoint: string, outboxEndpoint: string, port: number): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    // SES through the outbox, which keeps what was sent for the outbox page and passes it on.
    SES_ENDPOINT_URL: outboxEndpoint,
    // The console and its API on one origin (lib/local/dashboard-host.ts).
    CONSOLE_URL: `http://app.localhost:${port}`,
    // Where local workers reach the API (the screenshot capture reports there).
    API_BASE_URL: `http://localhost:${port}`,
    SITE_DOMAIN: 'localhost',
    FUNCTION_DOMAIN: 'fn.localhost',
    PUBLIC_SCHEME: 'http',
    PUBLIC_PORT_SUFFIX: `:${port}`,
    // Every table write serving must see is made in this process: the site server may keep what it read (lib/sites/serving-cache.ts).
    SITE_RECORD_CACHE: 'process',
    // Per-run secrets of the Git connect state and of environment variable encryption (a set value is kept,
    // so a developer on a persistent AWS endpoint can keep the same key across restarts).
    GIT_STATE_SECRET: config.secretValue('gitState') || randomBytes(32).toString('base64url'),
    // The seed of the forge tokens' signing key (lib/git/forge-keys.ts); `npm run dev` keeps it in .slipway/state/.
    FORGE_SIGNING_KEY: config.secretValue('forgeSigning') || randomBytes(32).toString('base64url'),
    ENV_ENCRYPTION_KEY: config.secretValue('envEncryption') || randomBytes(32).toString('base64'),
    // Set it to the secret `stripe listen` prints to forward a real test-mode account's events here.
    BILLING_WEBHOOK_SECRET: config.secretValue('billingWebhook') || `whsec_${randomBytes(24).toString('base64url')}`,
  };
}

/** The source mode's resources: lib/resources.ts provisioned, and the local ARNs of the schedule targets. */
async function sourceResources(endpoint: string, prefix: string): Promise<Record<string, string>> {
  return {
    ...(await provisionResources({ endpoint, region: config.awsRegion(), prefix })),
    // Schedule targets: fake ARNs the local scheduler driver maps back to lib/workers.ts rows.
    ...localScheduleTargetEnv(),
  };
}

/**
 * Starts the whole platform on this machine: the AWS endpoint (moto unless
 * one is given), every resource from the shared definitions, the API server
 * and the local drivers. Its configuration is an object of its own
 * (PlatformEnv, lib/config.ts): each request, hostname handler and driver
 * runs inside it, so several platforms can run in one process.
 */
export async function startLocalPlatform(options: LocalPlatformOptions): Promise<LocalPlatform> {
  // The process's AWS identity (the SDK reads it from the environment): moto takes any.
  localConfig.useTestCredentialsUnlessSet();
  const owned: Record<string, string> = {};
  const platformEnv = new PlatformEnv(owned);
  // What it starts inside runs as this platform's (the loops of drivers, the synthesized runtime's hosts).
  return platformEnv.run(() => start(options, platformEnv, owned));
}

async function start(options: LocalPlatformOptions, platformEnv: PlatformEnv, owned: Record<string, string>): Promise<LocalPlatform> {
  let moto: MotoServer | null = null;
  const endpoint = options.awsEndpoint ?? (moto = await startMoto({ env: options.motoEnv })).endpoint;
  let synthesized: SynthesizedRuntime | null = null;
  // In the synthesized mode the Lambdas' mail passes the IAM proxy after the outbox, as SES checks the caller's role.
  const outbox = await startMailOutbox(
    () => synthesized?.awsEndpoint ?? endpoint,
    (mail) => {
      const link = signInLinkOf(mail);
      if (link) options.onSignInLink?.(mail.to[0] ?? '', link);
    },
  );
  let api: ApiAnswer | undefined;
  // The synthesized mode's API is known once its template is provisioned, after the port is.
  const apiOf = options.synthesized ? () => api! : undefined;
  // The console first: its host is reserved (app is no project subdomain), and its /api/* falls through to the API.
  const hostnameHandlers = [dashboardHostnameHandler(outbox, apiOf), ...(options.hostnameHandlers ?? [])];
  const gate: StartGate = { ready: false };
  const server = createApiServer(hostnameHandlers, gate, apiOf, platformEnv);
  const drivers: LocalDriver[] = [];
  let released = () => {};
  try {
    const port = await listen(server, options.port, options.host ?? '127.0.0.1');
    // First: the secrets below keep a value given here.
    Object.assign(owned, settingsUnlessSet(options.settings?.({ consoleUrl: `http://app.localhost:${port}` })));
    const local = ownSettings(endpoint, outbox.endpoint, port);
    if (options.synthesized) {
      // The platform's own settings first: the Lambdas' environments take the local domains from them.
      Object.assign(owned, local);
      const { prefix } = options;
      synthesized = await startSynthesizedRuntime({ ...options.synthesized, endpoint, region: config.awsRegion(), prefix });
      api = synthesized.api;
      // After the console's handler: app.localhost is the console's, not a site's.
      hostnameHandlers.splice(1, 0, ...synthesized.hostnameHandlers);
    }
    const resources = synthesized?.env ?? (await sourceResources(endpoint, options.prefix));
    // In the synthesized mode the secrets' values are the ones Secrets Manager holds for the template's secrets.
    if (synthesized) Object.assign(owned, resources);
    else Object.assign(owned, resources, local);
    const env = owned;
    // Outside any call (a test calling lib/ directly), the platform started last is the one.
    if (options.defaultOutsideCalls !== false) released = startPlatformEnv(platformEnv);
    const baseUrl = `http://localhost:${port}`;
    for (const make of [...(synthesized?.drivers ?? []), ...(options.drivers ?? [])]) {
      const driver = make();
      driver.start();
      drivers.push(driver);
    }
    if (options.writeState) writeLocalState({ pid: process.pid, baseUrl, env });
    // Only now is every request answered for real (the server has answered 503 PLATFORM_STARTING since it listened).
    gate.ready = true;
    let stopped = false;
    return {
      baseUrl,
      port,
      awsEndpoint: endpoint,
      startedMoto: moto !== null,
      env,
      platformEnv,
      synthesized,
      consoleUrl: env.CONSOLE_URL!,
      outbox,
      // Inside the platform: what a driver or the analytics write on the way out goes to this platform's resources.
      stop: () =>
        platformEnv.run(async () => {
          if (stopped) return;
          stopped = true;
          // Together: a driver waits for the invocations it started, which the synthesized runtime's stop ends.
          await Promise.all([...drivers.map((d) => d.stop()), synthesized?.stop()]);
          server.closeAllConnections();
          await new Promise<void>((resolve) => server.close(() => resolve()));
          // After the last reply: its counts are written before the AWS endpoint goes.
          await siteAnalytics.stop();
          released();
          if (options.writeState) removeLocalState();
          await outbox.stop();
          await moto?.stop();
        }),
    };
  } catch (error) {
    released();
    await Promise.all([...drivers.map((d) => d.stop()), synthesized?.stop()]);
    server.close();
    await outbox.stop();
    await moto?.stop();
    throw error;
  }
}
