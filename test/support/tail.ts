import { request as httpRequest, type ClientRequest } from 'node:http';

/** One server-sent event of a live tail. */
export interface TailMessage {
  event: string;
  data: any;
}

/** An open live tail: its events as they come, waits for one, and the close. */
export interface OpenTail {
  status: number;
  contentType: string;
  events: TailMessage[];
  /** The next event (at or after `from`) that `match` accepts. */
  waitFor(match: (message: TailMessage) => boolean, timeoutMs?: number): Promise<TailMessage>;
  close(): void;
  closed: Promise<void>;
}

/** Opens GET .../functions/{name}/tail over HTTP, as `slipway logs --follow` does. Resolves once the head came. */
export function openTail(baseUrl: string, path: string, token: string): Promise<OpenTail> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, baseUrl);
    let req: ClientRequest;
    const events: TailMessage[] = [];
    const waiters = new Set<() => void>();
    req = httpRequest(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      let buffered = '';
      let closedResolve: () => void;
      const closed = new Promise<void>((r) => (closedResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        for (;;) {
          const end = buffered.indexOf('\n\n');
          if (end < 0) break;
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length === 0) continue;
          const text = data.join('\n');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON (an error envelope is whole JSON; events are JSON): kept as text.
          }
          events.push({ event, data: parsed });
          for (const wake of [...waiters]) wake();
        }
      });
      res.on('close', () => {
        closedResolve();
        for (const wake of [...waiters]) wake();
      });
      res.on('error', () => {});
      resolve({
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        events,
        closed,
        close: () => req.destroy(),
        waitFor(match, timeoutMs = 20_000) {
          return new Promise((found, fail) => {
            const check = () => {
              const hit = events.find(match);
              if (hit) {
                waiters.delete(check);
                clearTimeout(timer);
                found(hit);
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no such tail event within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}
