// The entry of the runner's container image: one queued invocation in a
// Fargate task (docs/functions.md, "Queued invocations in the cloud").
// Plain JavaScript, Node built-ins only, like runner.mjs beside it.
//
// The task role holds no permission: the worker that started the task gives
// it four presigned S3 URLs in its environment, the only access it has.
//
//   SLIPWAY_BUNDLE_URL   GET the bundle (function.mjs)
//   SLIPWAY_REQUEST_URL  GET the request JSON {method, query, headers, body} (body base64)
//   SLIPWAY_RESULT_URL   PUT the result JSON {status, headers, body, outcome}
//   SLIPWAY_CONSOLE_URL  PUT the console output [{at, stream, line}]
//   SLIPWAY_FUNCTION_URL the function's public URL (the handler's request.url)
//
// It downloads the bundle and the request into a scratch folder, runs the
// handler exactly as the local queued path does (`runner.mjs once` in a child
// process, its result one JSON line on fd 3, stdout and stderr the console),
// uploads the console output, then the result (the worker waits for the
// result object, so the console is already there when it sees it), and exits.
// The child gets none of the URLs: user code cannot write its own result.
//
// Exit codes tell the worker how a run without a result ended:
//   0    the result was uploaded
//   3    the handler's process ended without a result (a crash, process.exit)
//   137  the handler's process was killed for memory
//   143  the task was stopped (SIGTERM from StopTask)
//   1    anything else (the platform side failed: could not be run)
//   4    a blank task that took no invocation (its wait ended, it was stopped
//        first, or its assignment URL was refused): nothing ran, so the
//        worker that took it may start a fresh task for its invocation
//
// A blank task of the warm pool (docs/functions.md, "The warm pool") starts
// with none of the variables above, only:
//
//   SLIPWAY_ASSIGNMENT_URL      GET its one assignment {variables: {...the five above}}
//   SLIPWAY_WARM_UNTIL          epoch milliseconds: past it, it stops waiting and exits 4
//   SLIPWAY_ASSIGNMENT_POLL_MS  how often it asks (default 1000)
//
// It asks for the assignment until one is there, then runs that invocation
// exactly as above and exits: a task never takes a second invocation.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const TASK_VARIABLES = Object.freeze({
  bundleUrl: 'SLIPWAY_BUNDLE_URL',
  requestUrl: 'SLIPWAY_REQUEST_URL',
  resultUrl: 'SLIPWAY_RESULT_URL',
  consoleUrl: 'SLIPWAY_CONSOLE_URL',
  functionUrl: 'SLIPWAY_FUNCTION_URL',
});

export const TASK_EXIT = Object.freeze({ result: 0, crashed: 3, outOfMemory: 137, stopped: 143, failed: 1, unassigned: 4 });

export const WARM_VARIABLES = Object.freeze({
  assignmentUrl: 'SLIPWAY_ASSIGNMENT_URL',
  until: 'SLIPWAY_WARM_UNTIL',
  pollMs: 'SLIPWAY_ASSIGNMENT_POLL_MS',
});

/**
 * A blank task's wait: its one assignment's variables, or null when none came (the wait ended, SIGTERM came first,
 * or the URL was refused: it expired with the credentials that signed it). A 404 is "not yet".
 */
export async function awaitAssignment(env = process.env) {
  const url = env[WARM_VARIABLES.assignmentUrl];
  const until = Number(env[WARM_VARIABLES.until]);
  const pollMs = Number(env[WARM_VARIABLES.pollMs]) > 0 ? Number(env[WARM_VARIABLES.pollMs]) : 1000;
  let stopped = false;
  const onTerm = () => {
    stopped = true;
  };
  process.once('SIGTERM', onTerm);
  try {
    while (!stopped && Date.now() < until) {
      try {
        const reply = await fetch(url, { signal: AbortSignal.timeout(5000) });
        if (reply.ok) {
          const assignment = await reply.json();
          // Stopped while the assignment came: run nothing, so the worker that wrote it starts a task of its own.
          if (stopped) return null;
          return assignment && typeof assignment.variables === 'object' ? assignment.variables : null;
        }
        await reply.arrayBuffer();
        if (reply.status === 403 || reply.status === 400) {
          log(`the assignment URL was refused (HTTP ${reply.status})`);
          return null;
        }
      } catch (error) {
        log(`asking for the assignment failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(pollMs, until - Date.now()))));
    }
    return null;
  } finally {
    process.removeListener('SIGTERM', onTerm);
  }
}

/** Console lines kept in memory before the rest is only counted (the platform keeps fewer: lib/functions/invocations.ts). */
const MAX_LINES = 2000;
const MAX_BYTES = 512 * 1024;

async function withRetries(what, attempt) {
  let last;
  for (let i = 0; i < 3; i++) {
    try {
      return await attempt();
    } catch (error) {
      last = error;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** i));
    }
  }
  throw new Error(`${what} failed: ${last instanceof Error ? last.message : String(last)}`);
}

async function download(url, what) {
  return withRetries(`GET ${what}`, async () => {
    const reply = await fetch(url);
    if (!reply.ok) throw new Error(`HTTP ${reply.status}`);
    return Buffer.from(await reply.arrayBuffer());
  });
}

async function upload(url, what, value) {
  const body = Buffer.from(JSON.stringify(value));
  await withRetries(`PUT ${what}`, async () => {
    const reply = await fetch(url, { method: 'PUT', body });
    if (!reply.ok) throw new Error(`HTTP ${reply.status}`);
    await reply.arrayBuffer();
  });
}

function log(line) {
  process.stderr.write(`[task] ${line}\n`);
}

/** The console lines kept (at most MAX_LINES and MAX_BYTES), a last line saying how many more were dropped. */
function consoleKeeper() {
  const consoleLines = [];
  let consoleBytes = 0;
  let dropped = 0;
  const keep = (stream, line) => {
    consoleBytes += Buffer.byteLength(line) + 32;
    if (consoleLines.length >= MAX_LINES || consoleBytes > MAX_BYTES) dropped++;
    else consoleLines.push({ at: new Date().toISOString(), stream, line });
  };
  const consoleValue = () =>
    dropped
      ? [
          ...consoleLines,
          { at: new Date().toISOString(), stream: 'stderr', line: `[platform] ${dropped} more console lines were not kept` },
        ]
      : consoleLines;
  return { keep, consoleValue };
}

/**
 * Runs one invocation and resolves with the exit code. `env` holds the
 * variables above; `runnerPath` is runner.mjs (beside this file by default).
 */
export async function runTask({
  env = process.env,
  runnerPath = join(dirname(fileURLToPath(import.meta.url)), 'runner.mjs'),
  nodePath = process.execPath,
} = {}) {
  const urls = {};
  for (const [key, name] of Object.entries(TASK_VARIABLES)) {
    if (!env[name]) {
      log(`${name} is not set`);
      return TASK_EXIT.failed;
    }
    urls[key] = env[name];
  }
  const { keep, consoleValue } = consoleKeeper();
  const dir = await prepareInvocation(urls);
  if (typeof dir === 'number') return dir;

  const child = spawn(
    nodePath,
    [runnerPath, 'once', '--bundle', join(dir, 'bundle.mjs'), '--url', urls.functionUrl, '--request', join(dir, 'request.json')],
    {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      // Nothing of the task's environment (the presigned URLs above) reaches user code.
      env: { PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin', NODE_ENV: 'production', HOME: dir, TMPDIR: dir },
      cwd: dir,
    },
  );
  const output = watchOutput(child, keep);
  const control = watchControl(child);

  let stopped = false;
  const onTerm = () => {
    stopped = true;
    child.kill('SIGKILL');
  };
  process.once('SIGTERM', onTerm);
  const exit = await new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  process.removeListener('SIGTERM', onTerm);
  // The handler's HOME and TMPDIR: nothing reads it once the runner is gone (a task's disk is its own in the cloud,
  // the machine's /tmp in the local ECS).
  rmSync(dir, { recursive: true, force: true });

  try {
    await upload(urls.consoleUrl, 'console', consoleValue());
    if (control.result && !stopped) {
      await upload(urls.resultUrl, 'result', control.result);
      return TASK_EXIT.result;
    }
  } catch (error) {
    log(`upload failed: ${error instanceof Error ? error.message : String(error)}`);
    return TASK_EXIT.failed;
  }
  if (stopped) return TASK_EXIT.stopped;
  if (exit.signal === 'SIGKILL' || output.heapExhausted) return TASK_EXIT.outOfMemory;
  return TASK_EXIT.crashed;
}

/**
 * The invocation's folder with its bundle and request; or, when they cannot be fetched, the exit code once a
 * start_failed result is sent (or could not be).
 */
async function prepareInvocation(urls) {
  try {
    const dir = mkdtempSync(join(tmpdir(), 'invocation-'));
    const [bundle, request] = await Promise.all([download(urls.bundleUrl, 'bundle'), download(urls.requestUrl, 'request')]);
    writeFileSync(join(dir, 'bundle.mjs'), bundle);
    writeFileSync(join(dir, 'request.json'), request);
    return dir;
  } catch (error) {
    log(`the invocation could not be prepared: ${error instanceof Error ? error.message : String(error)}`);
    try {
      await upload(urls.resultUrl, 'result', { status: 500, headers: [], body: '', outcome: 'start_failed' });
      return TASK_EXIT.result;
    } catch {
      return TASK_EXIT.failed;
    }
  }
}

/** The runner's stdout and stderr, line by line into the kept console; whether it ran out of heap. */
function watchOutput(child, keep) {
  const output = { heapExhausted: false };
  for (const stream of ['stdout', 'stderr']) {
    let partial = '';
    const emit = (line) => {
      if (stream === 'stderr' && /JavaScript heap out of memory|Reached heap limit/.test(line)) output.heapExhausted = true;
      keep(stream, line);
    };
    child[stream].setEncoding('utf8');
    child[stream].on('data', (text) => {
      // The task's own output goes to its log group too (kept 7 days).
      (stream === 'stdout' ? process.stdout : process.stderr).write(text);
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop();
      for (const line of lines) emit(line);
      if (partial.length > 16_384) {
        emit(partial);
        partial = '';
      }
    });
    child[stream].on('end', () => {
      if (partial) emit(partial);
    });
  }
  return output;
}

/** The runner's control channel (fd 3): its first result line. */
function watchControl(child) {
  const control = { result: null };
  let text = '';
  child.stdio[3].setEncoding('utf8');
  child.stdio[3].on('data', (chunk) => {
    text += chunk;
    let newline;
    while (!control.result && (newline = text.indexOf('\n')) >= 0) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      try {
        const message = JSON.parse(line);
        if (message && typeof message === 'object' && 'outcome' in message) control.result = message;
      } catch {
        // Not a result line.
      }
    }
  });
  return control;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const run = process.env[WARM_VARIABLES.assignmentUrl]
    ? awaitAssignment().then((variables) => (variables ? runTask({ env: { ...variables, PATH: process.env.PATH } }) : TASK_EXIT.unassigned))
    : runTask();
  run.then(
    (code) => process.exit(code),
    (error) => {
      log(`task failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(TASK_EXIT.failed);
    },
  );
}
