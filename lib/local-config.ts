import { homedir } from 'node:os';
import { join } from 'node:path';
import { config } from './config.ts';

/**
 * The local platform's own settings (`npm run dev` and the tests' platform), read from the environment on
 * each call. The local platform is a program of its own: none of these is read by deployed code, so they
 * stay out of lib/config.ts, which every Lambda bundle carries. What it shares with deployed code (the AWS
 * endpoint and region, the secrets) it reads through lib/config.ts; the variables it writes for the code it
 * runs and for its children stay writes.
 */
export const localConfig = {
  /** The API's port: PORT, 3000 by default; anything but a port number is refused with `invalid(raw)`. */
  port: (invalid: (raw: string | undefined) => Error): number => {
    const port = Number(process.env.PORT ?? 3000);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalid(process.env.PORT);
    return port;
  },
  /** Prefix of the local resources' names. */
  resourcePrefix: () => process.env.SLIPWAY_PREFIX ?? 'slipway-local',
  /** Where the project's running platform is recorded (the CLI finds it there). */
  stateFile: () => process.env.SLIPWAY_STATE_FILE || join(process.cwd(), '.slipway', 'local.json'),
  /** The user's state folder (XDG), where the running platform is recorded for every folder. */
  userStateHome: () => process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state'),
  /** What is kept across restarts (moto's state, sealed secrets): SLIPWAY_LOCAL_STATE_DIR, else under `root`. */
  stateDir: (root: string) => process.env.SLIPWAY_LOCAL_STATE_DIR || join(root, '.slipway', 'state'),
  /** The platform's PATH as it was given (undefined when unset). */
  searchPath: () => process.env.PATH,
  /** Those of `names` the platform has (its own settings, else the environment's), with their values: passed on to the code it runs. */
  setVariables: (names: readonly string[]): Record<string, string> =>
    Object.fromEntries(names.flatMap((name) => (config.variable(name) === undefined ? [] : [[name, config.variable(name)!]]))),
  /** One variable of the platform (its own setting, else the environment's), passed on to the code it runs. */
  variable: (name: string) => config.variable(name),
  /**
   * The process's AWS identity when none is given: the SDK reads credentials and region from the environment,
   * and moto takes any. One per process, whatever platforms it runs, so it stays in the environment.
   */
  useTestCredentialsUnlessSet: () => {
    process.env.AWS_REGION ??= 'us-east-1';
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  },
  /** Synthesized mode: where the cloud assembly is (SLIPWAY_CDK_OUT, else `fallback`). */
  assemblyDir: (fallback: string) => process.env.SLIPWAY_CDK_OUT || fallback,
  /** Synthesized mode: execution environments one Lambda may keep at once. */
  lambdaMaxEnvironments: () => Number(process.env.LOCAL_LAMBDA_MAX_ENVIRONMENTS || 10),
  /**
   * How many times its `Timeout` a platform Lambda may run before it is ended (LOCAL_LAMBDA_TIMEOUT_SCALE, 1 unless
   * set, never less): the deadline its handler reads, in both modes, and in the synthesized mode the host's end. A test run
   * shares two cores among several platforms, where a 10-second route could pass its time waiting for a core; the
   * tests stretch it, and assert no timeout.
   */
  lambdaTimeoutScale: () => Math.max(1, Number(process.env.LOCAL_LAMBDA_TIMEOUT_SCALE) || 1),
  /** Synthesized mode: how long the start waits for the template's ECS services to have healthy tasks. */
  ecsServiceStartTimeoutMs: () => Number(process.env.LOCAL_ECS_SERVICE_START_TIMEOUT_MS || 60_000),
  /** Synthesized mode: the grace between a task's SIGTERM and SIGKILL, instead of its container's StopTimeout. */
  ecsStopTimeoutSeconds: (): number | undefined =>
    process.env.LOCAL_ECS_STOP_TIMEOUT_SECONDS ? Number(process.env.LOCAL_ECS_STOP_TIMEOUT_SECONDS) : undefined,
  /**
   * Synthesized mode: execution environments of each Lambda on the functions door's path (the router and each
   * user-function Lambda). More than the door's 30 requests per function, so that the door's cap is what holds.
   */
  doorLambdaMaxEnvironments: () => Number(process.env.LOCAL_DOOR_LAMBDA_MAX_ENVIRONMENTS || 40),
  /** The caller's PYTHONPATH, which moto's own path is put before. */
  pythonPath: () => process.env.PYTHONPATH,
  /** `off` switches local screenshot captures off (the test platform's default). */
  screenshotCaptureOff: () => process.env.SCREENSHOT_CAPTURE === 'off',
  /**
   * Between two looks of the scheduler driver at due schedules: each is a ListSchedules of moto's slowest kind (its
   * flask path), and EventBridge Scheduler itself fires within the minute, so a second is plenty.
   */
  schedulerPollMs: () => Number(process.env.LOCAL_SCHEDULER_POLL_MS || 1000),
  /** Between two receives of the queue driver on an empty queue. */
  queuePollMs: () => Number(process.env.LOCAL_QUEUE_POLL_MS || 50),
  /** Worker calls the queue driver runs at once. */
  queueConcurrency: () => Number(process.env.LOCAL_QUEUE_CONCURRENCY || 16),
  /**
   * The queue driver's long-poll wait, 0 to 20 seconds. A message ends a wait at once and a stop aborts it: at 1 s,
   * each queue of each platform cost moto and Node a receive a second. Not 20: a platform killed (SIGKILL) leaves
   * its polls waiting in an AWS endpoint it does not own, where each may still take a message, as SQS's would.
   */
  queueWaitSeconds: () => Math.min(20, Math.max(0, Number(process.env.LOCAL_QUEUE_WAIT_SECONDS ?? 10) || 0)),
};
