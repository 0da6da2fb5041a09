// Runs a command and writes its wall time (ms) to fd 3, for the deploy bench. The bench's own process
// hosts the local platform, whose event loop is busy after a publish (the queued off-path work
// starts): timed there, a command's exit would be noticed late. Timed here, in a process that does
// nothing else, the figure is what the person at the terminal waits.
import { spawnSync } from 'node:child_process';
import { writeSync } from 'node:fs';

const [command, ...args] = process.argv.slice(2);
const started = process.hrtime.bigint();
const result = spawnSync(command, args, { stdio: 'inherit' });
const ms = Number(process.hrtime.bigint() - started) / 1e6;
writeSync(3, `${ms}\n`);
if (result.error) throw result.error;
process.exit(result.status ?? 1);
