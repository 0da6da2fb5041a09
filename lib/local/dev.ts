import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dashboardDist } from './dashboard-host.ts';
import { LocalPlatformError } from './moto.ts';
import { startLocalPlatform } from './platform.ts';
import { assemblyDir, ensureSynthesized } from '../../local-cloud/template/assembly.ts';
import { permissionReport } from '../../local-cloud/report.ts';
import { localParts } from './wiring.ts';
import { openLocalState } from './persistence.ts';
import { removeRunningPlatform, runningPlatformPath, writeRunningPlatform } from './state.ts';
import { config } from '../config.ts';
import { localConfig } from '../local-config.ts';

/** What `npm run dev` sets beside the platform's own, each unless the environment sets it. */
function devSettings(consoleUrl: string, keptSecrets: Record<string, string>): Record<string, string> {
  return {
    ...keptSecrets,
    // The console's dev server (vite).
    CORS_ORIGINS: 'http://localhost:5173',
    // A repository served on this machine (http on loopback) builds locally; the cloud accepts https on public addresses only.
    GIT_ALLOW_LOOPBACK_HTTP: 'true',
    // Confirmation links open the console's page too (the default points at the cloud console).
    EMAIL_CONFIRM_URL: `${consoleUrl}/confirm-email`,
  };
}

/** `npm run dev`: the whole platform on this machine, until Ctrl-C. */
async function main() {
  const options = readOptions();
  await prepareBuilds(options.synth);
  // Kept across restarts (.slipway/state/, .slipway/state-synth/ for --synth): moto's state and the secrets stored values are sealed with.
  const state = openLocalState({ fresh: options.fresh, mode: options.synth ? 'synth' : 'source' });
  const parts = localParts({ synthesized: options.synth });
  const platform = await startLocalPlatform({
    synthesized: options.synth ? { assemblyDir: assemblyDir() } : undefined,
    port: options.port,
    prefix: localConfig.resourcePrefix(),
    awsEndpoint: config.awsEndpoint(),
    writeState: true,
    motoEnv: state.motoEnv,
    hostnameHandlers: parts.hostnameHandlers,
    drivers: parts.drivers,
    // Nothing is delivered locally: the link is printed here (and listed on the outbox page).
    onSignInLink: (email, url) => process.stdout.write(`Sign-in link for ${email}: ${url}\n`),
    settings: ({ consoleUrl }) => devSettings(consoleUrl, state.secrets),
  });
  // The CLI finds this platform from any folder by this record (a site's folder has no .slipway/).
  writeRunningPlatform({ pid: process.pid, baseUrl: platform.baseUrl, repo: process.cwd(), started_at: new Date().toISOString() });
  // The synthesized mode runs functions in user-function Lambdas (local-cloud/lambda/lambda-service.ts), not the sandbox.
  const sandbox = platform.synthesized ? null : parts.functions.sandboxReport();
  process.stdout.write(startupBanner(platform, state, sandbox).join('\n'));
  stopOnSignal(platform);
}

/** The port and the command line's options; an unknown option is refused. */
function readOptions(): { port: number; synth: boolean; fresh: boolean } {
  const port = localConfig.port((raw) => new LocalPlatformError(`PORT must be a port number, not "${raw}"`));
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--fresh' && a !== '--synth');
  if (unknown.length > 0) {
    const options = '--fresh (start empty) and --synth (run the synthesized template)';
    throw new LocalPlatformError(`unknown option ${unknown[0]}; the options are ${options}`);
  }
  return { port, synth: args.includes('--synth'), fresh: args.includes('--fresh') };
}

/** What the platform serves that is built from this checkout: the synthesized template (for --synth) and the console. */
async function prepareBuilds(synth: boolean): Promise<void> {
  // `npm run dev -- --synth`: run the synthesized template (synthesized first when cdk.out is not current).
  if (synth) await ensureSynthesized((line) => process.stdout.write(`${line}\n`));
  if (!existsSync(join(dashboardDist(), 'index.html'))) {
    process.stdout.write('Building the console (dashboard/dist)...\n');
    const { buildDashboard } = await import('../../dashboard/build.mjs');
    await buildDashboard({ quiet: true });
  }
}

type Platform = Awaited<ReturnType<typeof startLocalPlatform>>;

/** The synthesized template's Lambdas, what of it does not run, and its ECS services' tasks. */
function synthesizedLines(synthesized: NonNullable<Platform['synthesized']>): string[] {
  return [
    `Running the synthesized template: ${synthesized.lambdaCount} Lambdas`,
    ...synthesized.skipped.map((s) => `  not run: ${s.logicalId}: ${s.reason}`),
    ...synthesized.ecs
      .services()
      .map(
        (service) =>
          `  ECS service ${service.name}: ${service.tasks.length} of ${service.desiredCount} tasks of ${service.family} running` +
          service.tasks
            .map((task) => ` [${task.ports.map((p) => `${p.containerPort} at 127.0.0.1:${p.loopbackPort}`).join(', ')}]`)
            .join(''),
      ),
  ];
}

/** What is running where, and how to begin. */
function startupBanner(platform: Platform, state: ReturnType<typeof openLocalState>, sandbox: string[] | null): string[] {
  return [
    '',
    'Slipway local platform is running.',
    ...(platform.synthesized ? synthesizedLines(platform.synthesized) : []),
    `  Console:       ${platform.consoleUrl} (sign in with any address; mail is listed at ${platform.consoleUrl}/_local/outbox)`,
    `  API:           ${platform.baseUrl}/api/v1 (and ${platform.consoleUrl}/api/v1, the console's own origin)`,
    `  Sites:         http://{subdomain}.localhost:${platform.port}`,
    `  Functions:     http://{name}-{subdomain}.fn.localhost:${platform.port}`,
    `  CLI address:   ${runningPlatformPath()} (\`slipway login\` finds it from any folder: this checkout's platform inside it, else the one started last)`,
    `  State:         ${platform.startedMoto ? state.outcome().sentence : `kept by the endpoint itself (secrets in ${state.dir})`}`,
    `  Previews:      http://{branch}-{preview_slug}.previews.localhost:${platform.port} (builds: docs/builds.md)`,
    `  AWS endpoint:  ${platform.awsEndpoint}${platform.startedMoto ? ' (moto_server, started for this run)' : ''}`,
    sandbox === null
      ? '  Functions run: in Lambdas the router creates, queued calls in tasks of the local ECS (docs/synthesized-mode.md)'
      : `  Function sandbox: ${sandbox.length === 0 ? 'full (memory cgroup, bubblewrap, empty network namespace with the egress proxy, node --permission)' : `with fallbacks: ${sandbox.join(' ')}`}`,
    '',
    'Create a first user and team (in another terminal):',
    '  npm run -s slipway -- admin create-user --email you@example.com --name You',
    '  npm run -s slipway -- admin create-team --name "My team" --owner <user_id>',
    `  curl -H "Authorization: Bearer <session_token>" ${platform.baseUrl}/api/v1/team/profile`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ];
}

/** Ctrl-C (or SIGTERM) stops the platform once, forgets its record, and for --synth prints the permissions it used. */
function stopOnSignal(platform: Platform): void {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nStopping the local platform...\n');
    const usage = platform.synthesized?.usage();
    removeRunningPlatform();
    await platform.stop();
    if (usage) process.stdout.write(permissionReport(usage));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  if (error instanceof LocalPlatformError) {
    process.stderr.write(`slipway dev: ${error.message}\n`);
  } else {
    process.stderr.write(`slipway dev: could not start: ${(error as Error).message}\n`);
  }
  process.exit(1);
});
