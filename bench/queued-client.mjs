// The queued door's client for bench/queued.ts, run in a process of its own so that its CPU is never counted as
// the platform's: argv[2] is a JSON task, and one JSON line of figures is printed. Loopback only.
//   {mode: 'sequential', baseUrl, path, runs, pollMs}: invoke and poll to the end, one after another
//   {mode: 'load', baseUrl, path, inFlight, seconds, atLeast, pollMs}: that many at once for that long, and until
//   `atLeast` have ended
//   {mode: 'polls', baseUrl, pollUrl, count}: polls one invocation `count` times, one after another
const task = JSON.parse(process.argv[2]);
if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(task.baseUrl).hostname)) throw new Error('loopback only');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TERMINAL = ['completed', 'failed', 'timed_out'];
let polls = 0;

async function invokeAndWait(pollMs) {
  const sent = Date.now();
  const started = performance.now();
  const res = await fetch(`${task.baseUrl}${task.path}`, { method: 'POST' });
  if (res.status !== 202) throw new Error(`invoke: ${res.status} ${await res.text()}`);
  const { poll_url } = (await res.json()).data;
  for (;;) {
    polls++;
    const poll = await (await fetch(`${task.baseUrl}${poll_url}`)).json();
    if (TERMINAL.includes(poll.data.status)) {
      return {
        clientMs: performance.now() - started,
        serverMs: Date.parse(poll.data.finished_at) - sent,
        status: poll.data.status,
        pollUrl: poll_url,
      };
    }
    await sleep(pollMs);
  }
}

if (task.mode === 'sequential') {
  const runs = [];
  for (let i = 0; i < task.runs; i++) runs.push(await invokeAndWait(task.pollMs));
  console.log(JSON.stringify({ runs, polls }));
} else if (task.mode === 'load') {
  let completed = 0;
  let other = 0;
  const until = Date.now() + task.seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: task.inFlight }, async () => {
      while (Date.now() < until || completed + other < task.atLeast) {
        if ((await invokeAndWait(task.pollMs)).status === 'completed') completed++;
        else other++;
      }
    }),
  );
  console.log(JSON.stringify({ completed, other, polls, seconds: (performance.now() - started) / 1000 }));
} else if (task.mode === 'polls') {
  for (let i = 0; i < task.count; i++) {
    const res = await fetch(`${task.baseUrl}${task.pollUrl}`);
    if (res.status !== 200) throw new Error(`poll: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    polls++;
  }
  console.log(JSON.stringify({ polls }));
} else {
  throw new Error(`unknown mode ${task.mode}`);
}
