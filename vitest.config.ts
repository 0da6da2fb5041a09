import { defineConfig } from 'vitest/config';
import ProjectOrderSequencer from './test/support/sequencer.ts';
import { scaled } from './test/support/wait.ts';

/**
 * The integration suites that also run against the synthesized template
 * (`npm run dev -- --synth`, local-cloud/): one per area, for what only the template shows (routes, bundles,
 * environments, event source mappings, CloudFront, each Lambda's own IAM grants). Their other cases repeat logic
 * the source project already asserts; docs/synthesized-mode.md ("In the tests") lists each suite and why.
 */
export const synthesizedSuites = [
  // API: the HTTP API's CORS configuration, body limits and the JWKS route's secret. Every route's Lambda, the
  // $default route and the writes of the API suites that run in the source mode only: test/synth/routes.test.ts.
  'test/integration/pipeline.test.ts',
  // Sites: a publish through the upload routes, _redirects and _headers compiled by the finalize Lambda's bundle and
  // served through the sites distribution by the serve-site Lambda's, and promote.
  'test/integration/serving-rules.test.ts',
  // Functions: the HTTPS door through CloudFront, the router Lambda and one user-function Lambda per built function,
  // and the queued door through the invocations worker Lambda and a Fargate task per invocation in the local ECS
  // (local-cloud/ecs/ecs-service.ts): two paths of the template that the source mode does not run at all.
  'test/integration/functions-door.test.ts',
  'test/integration/functions-queued.test.ts',
  // Domains: the domains Lambdas' Route 53 and certificate calls under their roles.
  'test/integration/domains.test.ts',
];

/**
 * Source suites whose cases need a handler's module evaluated for them: secrets.test.ts gives the handlers only
 * secrets' ARNs and asserts the cold start's fetch (a top-level `loadSecrets`, once per module load), which a
 * worker's shared module graph has long run by then.
 */
const freshModuleSuites = ['test/integration/secrets.test.ts'];

/** One module graph per worker, shared by its files in turn; what a file sets in process.env is taken back after it. */
const sharedModuleGraph = { isolate: false, setupFiles: ['test/support/restore-env.ts'] };

export default defineConfig({
  test: {
    pool: 'forks',
    // Three on two cores: a worker of the source or synth project waits on its platform (moto, child processes) much of
    // the time; two left the cores about two thirds busy.
    maxWorkers: 3,
    // Which project's files go first (test/support/sequencer.ts says why).
    sequence: { sequencer: ProjectOrderSequencer },
    // Budgets scale with TEST_TIME_SCALE (test/support/wait.ts) on a machine known to be slow.
    testTimeout: scaled(30_000),
    // `npm run test:coverage`: line and branch coverage of the platform's code (V8's, no instrumentation).
    coverage: {
      provider: 'v8',
      include: ['lib/**/*.{ts,mjs}', 'local-cloud/**/*.{ts,mjs}', 'handlers/**/*.ts'],
      exclude: ['**/*.test.ts'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      // A failed test still leaves the figures of what ran.
      reportOnFailure: true,
    },
    hookTimeout: scaled(60_000),
    env: {
      // A route's 10 s is the template's, not a budget the suites test: a busy machine may not end it (both modes).
      LOCAL_LAMBDA_TIMEOUT_SCALE: String(scaled(5)),
      LOG_LEVEL: 'CRITICAL',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    },
    projects: [
      // Pure rules: no AWS endpoint, no platform, nothing started (and no wait for moto's start).
      // One module graph per worker (isolate: false): a file's import costs are paid once, not per file.
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'lib/**/*.test.ts'],
          ...sharedModuleGraph,
        },
      },
      // The synthesized stack's template, its grants and price: CDK and cfn-lint, no AWS endpoint.
      // One module graph per worker: aws-cdk-lib and cdk-nag are loaded once, not per file (the project alone: 150 to
      // 110 CPU-s). Each file builds apps of its own; nothing of CDK's is global.
      {
        extends: true,
        test: { name: 'infra', include: ['test/infra/**/*.test.ts'], globalSetup: ['test/support/infra-setup.ts'], ...sharedModuleGraph },
      },
      // The platform from its sources: one per worker, on a moto_server of the worker's own (test/support/platform.ts).
      {
        extends: true,
        test: {
          name: 'source',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          exclude: freshModuleSuites,
          globalSetup: ['test/support/global-setup.ts'],
          // A worker's files share its module graph and its platform (test/support/platform.ts), each file isolated
          // by teams and projects of its own; what a file sets in process.env is taken back after it.
          ...sharedModuleGraph,
          env: { SLIPWAY_TEST_SHARED_PLATFORM: '1' },
        },
      },
      // The source platform for the files that must import the handlers afresh: a module graph of their own each.
      {
        extends: true,
        test: { name: 'source-fresh', include: freshModuleSuites, globalSetup: ['test/support/global-setup.ts'] },
      },
      // The same platform from cdk.out's template; test/synth/ holds tests of the synthesized mode itself.
      {
        extends: true,
        test: {
          name: 'synth',
          include: [...synthesizedSuites, 'test/synth/**/*.test.ts'],
          // A file's first hook waits for the run's one synthesis (synth-setup.ts), which on a fresh clone under the
          // source project's load can pass the default minute.
          hookTimeout: scaled(180_000),
          // A worker's files share its module graph (the project alone: 304 to 268 CPU-s), each with a platform of its
          // own: the template's platform is not shared, since its Lambdas run from the assembly a file may alter.
          ...sharedModuleGraph,
          globalSetup: ['test/support/global-setup.ts', 'test/support/synth-setup.ts'],
          // The queued door's warm pool (the template's 1) is off but where functions-queued.test.ts sizes it for its
          // own cases: else the keeper's schedule keeps a blank task (a process asking moto every second) per platform.
          env: { SLIPWAY_PLATFORM_MODE: 'synth', FUNCTIONS_WARM_TASKS: '0' },
        },
      },
    ],
  },
});
