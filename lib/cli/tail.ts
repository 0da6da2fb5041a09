import { tailEventLine, type TailEventData } from '../functions/tail-lines.ts';
import type { ApiClient } from './api-client.ts';

/**
 * `slipway logs NAME --follow`: the function's live tail (GET .../functions/{name}/tail, server-sent events), printed
 * as it comes until Ctrl-C. The server ends a tail after 14 minutes; it is opened again at once.
 */

/** Reads one tail to its end; false when the server did not end it (the connection went). */
async function readTail(api: ApiClient, path: string, name: string, json: boolean): Promise<boolean> {
  const res = await api.openStream(path);
  res.setEncoding('utf8');
  let buffered = '';
  for await (const chunk of res) {
    buffered += chunk as string;
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const raw = /^data: (.*)$/m.exec(block)?.[1];
      if (!event || raw === undefined) continue;
      const data = JSON.parse(raw) as TailEventData;
      if (event === 'open') process.stderr.write(`Tailing ${name}: calls from now on (Ctrl-C to stop).\n`);
      if (event === 'end') return true;
      if (json) {
        if (event !== 'open') process.stdout.write(`${JSON.stringify({ event, ...data })}\n`);
        continue;
      }
      const line = tailEventLine(event, data);
      if (line) process.stdout.write(`${line}\n`);
    }
  }
  return false;
}

export async function followFunctionTail(api: ApiClient, projectId: string, name: string, json: boolean): Promise<number> {
  const path = `/api/v1/projects/${encodeURIComponent(projectId)}/functions/${encodeURIComponent(name)}/tail`;
  // Ctrl-C is how a tail ends: the connection closes, and the server removes the tail.
  process.once('SIGINT', () => process.exit(0));
  process.once('SIGTERM', () => process.exit(0));
  for (;;) {
    if (!(await readTail(api, path, name, json))) {
      process.stderr.write('The tail was cut; opening it again.\n');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
