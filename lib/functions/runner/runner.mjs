// The one runner program every functions host uses (local sandbox, cloud
// adapter). Plain JavaScript, Node built-ins only.
//
// It loads one ES module bundle, resolves the handler in the spec's order,
// builds the Web Request the handler receives, calls it with `context`, and
// turns what it returns into a reply. The core (core.mjs, re-exported here)
// has no socket server in it, so the cloud adapter can load it too; serve.mjs
// is the door's instance, setup.mjs the process set-up, and the framing and
// header names are protocol.mjs, beside it.
//
// Modes (argv[2]):
//   serve  An HTTPS-door instance: a server on a path-based unix socket
//          (--socket PATH) speaking the light framing of protocol.mjs (FRAME), not
//          HTTP: the door parses HTTP once, the runner never does. Many
//          requests at once, as streams of one connection. Fd 3 is the control
//          channel, JSON lines both ways (stdout and stderr are the user's
//          console): the runner says {"type":"booted"} once it listens and has
//          loaded node:http and undici, then a pre-started blank instance is
//          told {"type":"load","bundle":PATH,"url":URL} and answers
//          {"type":"loaded"} or {"type":"load_failed","message":...}.
//          --bundle and --url load at start instead. A blank instance may be
//          told {"type":"once","bundle":PATH,"url":URL,"request":PATH} instead:
//          it runs that one queued invocation as `once` mode does, answers
//          {"type":"result",...the result} and exits (the local host starts
//          these processes ahead of need, so a queued call does not wait for
//          node to boot, yet still has a process of its own).
//   once   One request (queued door): reads {method, query, headers, body}
//          (body base64) as JSON from --request FILE or --request-fd N, writes
//          {status, headers, body, outcome} (body base64) as one JSON line to
//          fd 3 (or --result-fd N) and exits.
//
// Egress: when SLIPWAY_EGRESS_SOCKET names the platform's egress proxy socket,
// a tiny TCP bridge from 127.0.0.1:SLIPWAY_EGRESS_PORT to it starts before any
// user code; the host runs node with NODE_USE_ENV_PROXY=1 and HTTPS_PROXY
// pointing at the bridge, and https.Agents made by user code get `proxyEnv`.

import { readFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { defaultLog, describeError, runOnce } from './core.mjs';
import { serve } from './serve.mjs';
import { setUpProcess } from './setup.mjs';

// The core, for what loads runner.mjs as a module (the Lambda entry, tests).
export { buildRequest, collectReply, createContext, invokeHandler, loadHandler, replyHead, resolveHandler } from './core.mjs';
/** The outcome header, for the hosts that read the core's replies (tests, the Lambda entry). */
export { OUTCOME_HEADER } from './protocol.mjs';
export { startEgressBridge } from './setup.mjs';

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!match) continue;
    options[match[1]] = match[2] ?? argv[++i];
  }
  return options;
}

async function once(options) {
  await setUpProcess();
  const input = JSON.parse(readFileSync(options['request-fd'] !== undefined ? Number(options['request-fd']) : options.request, 'utf8'));
  const resultFd = options['result-fd'] !== undefined ? Number(options['result-fd']) : 3;
  const result = await runOnce({ bundle: options.bundle, url: options.url, input });
  writeSync(resultFd, `${JSON.stringify(result)}\n`);
  process.exit(0);
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const mode = process.argv[2];
  const options = parseArgs(process.argv.slice(3));
  const run = mode === 'serve' ? serve : mode === 'once' ? once : null;
  if (!run) {
    process.stderr.write('usage: runner.mjs serve --socket PATH [--bundle FILE --url URL] | once --bundle FILE --url URL --request FILE\n');
    process.exit(2);
  }
  run(options).catch((error) => {
    defaultLog(`runner failed: ${describeError(error)}`);
    process.exit(1);
  });
}
