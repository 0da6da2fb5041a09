import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, navigate } from '../router.tsx';
import { api } from '../session.ts';
import { ErrorNote, formatTime, Loading, Notice, shortId, TextArea, useAction, useInterval, useLoad } from '../ui.tsx';
import { tailEventLine, type TailEventData } from '../../../lib/functions/tail-lines.ts';
import type { Reply } from '../api.ts';
import type { FunctionsList, FunctionView, Invocation, Project } from '../api-types.ts';

const TERMINAL = new Set(['completed', 'failed', 'timed_out']);
/** The item segment of an invocation's address: `{function}@{invocation id}`. */
const invocationItem = (name: string, id: string) => `${encodeURIComponent(name)}@${id}`;

function decodeBody(base64: string | undefined): string {
  if (!base64) return '';
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
  } catch {
    return base64;
  }
}

/** Lines a live tail shows at most: the oldest go first. */
const TAIL_LINES = 200;

/**
 * The function's live tail (GET .../functions/{name}/tail, server-sent events; the session cookie goes with them):
 * console lines, errors and each call's status and duration, for HTTPS calls made while it is open. Nothing is
 * stored, so nothing is shown from before.
 */
function LiveTail(props: { project: Project; fn: FunctionView }) {
  const [lines, setLines] = useState<string[]>([]);
  const [state, setState] = useState<'opening' | 'open' | 'failed'>('opening');
  useEffect(() => {
    const source = new EventSource(`/api/v1/projects/${props.project.id}/functions/${encodeURIComponent(props.fn.name)}/tail`);
    const add = (line: string) => setLines((old) => [...old, line].slice(-TAIL_LINES));
    source.addEventListener('open', () => setState('open'));
    for (const event of ['console', 'error', 'call'])
      source.addEventListener(event, (e) => {
        const line = tailEventLine(event, JSON.parse((e as MessageEvent).data) as TailEventData, formatTime);
        if (line) add(line);
      });
    // A refusal (no longer a member, the function removed) closes the source; a cut connection reconnects by itself.
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) setState('failed');
    };
    return () => source.close();
  }, [props.project.id, props.fn.name]);
  return (
    <>
      <p role="status">
        {state === 'opening' && 'Opening the live tail…'}
        {state === 'open' && 'Live: HTTPS calls from now on appear here (nothing is stored).'}
        {state === 'failed' && 'The live tail could not be opened.'}
      </p>
      {/* biome-ignore lint/a11y: a scrollable log is focusable and named, so keyboard and screen-reader users reach it (axe: scrollable-region-focusable) */}
      <pre class="log" data-testid="live-tail" tabIndex={0} aria-label={`Live tail of ${props.fn.name}`} aria-live="polite">
        {lines.length > 0 ? lines.join('\n') : 'Waiting for calls…'}
      </pre>
    </>
  );
}

function FunctionCard(props: { project: Project; fn: FunctionView }) {
  const { project, fn } = props;
  const [body, setBody] = useState('');
  const list = useLoad(
    () =>
      api.get<Reply<'/api/v1/projects/{id}/functions/{name}/invocations', 'get'>>(
        `/projects/${project.id}/functions/${encodeURIComponent(fn.name)}/invocations`,
      ),
    [fn.name],
  );
  const action = useAction();
  const [tailing, setTailing] = useState(false);
  return (
    <li class="card wide">
      <h3>{fn.name}</h3>
      <p>
        HTTPS: <a href={fn.url}>{fn.url}</a>
      </p>
      {fn.schedule && (
        <p data-testid="schedule">
          Runs on <code>{fn.schedule}</code> (UTC) · next run {formatTime(fn.next_run_at ?? undefined)}
          {fn.skipped_runs ? ` · ${fn.skipped_runs} skipped while the previous run was still going` : ''}
        </p>
      )}
      <button type="button" aria-pressed={tailing} onClick={() => setTailing(!tailing)}>
        {tailing ? 'Stop the live tail' : 'Live tail'}
      </button>
      {tailing && <LiveTail project={project} fn={fn} />}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const queued = await action.run(() =>
            api.call<{ invocation_id: string }>(
              'POST',
              `/public/functions/${encodeURIComponent(project.subdomain)}/${encodeURIComponent(fn.name)}`,
              {
                rawBody: body,
                headers: { 'content-type': 'application/json' },
                team: null,
              },
            ),
          );
          if (queued) navigate(`/projects/${project.id}/functions/${invocationItem(fn.name, queued.invocation_id)}`);
        }}
      >
        <TextArea
          label={`Request body for ${fn.name}`}
          name="body"
          rows={3}
          value={body}
          onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
        />
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Queuing…' : 'Run as a queued invocation'}
        </button>
      </form>
      <h4>Recent queued invocations</h4>
      <ErrorNote error={list.error} />
      {list.data?.invocations.length === 0 && <p>None in the last 7 days.</p>}
      <ul>
        {list.data?.invocations.map((i) => (
          <li key={i.id}>
            <Link href={`/projects/${project.id}/functions/${invocationItem(fn.name, i.id)}`}>{shortId(i.id)}</Link> {i.status} ·{' '}
            {i.trigger ?? 'queued'} · {formatTime(i.created_at)}
          </li>
        ))}
      </ul>
    </li>
  );
}

/** Functions built and listed for a team outside the beta answer no call: what the console says about them. */
export const NOT_ENROLLED =
  'These functions are deployed but answer only once your team is enrolled in the functions beta (until then their URLs answer 404). Ask the platform operator to enroll the team.';

/** The note beside a deploy whose functions will not answer yet (the team is not in the functions beta). */
export function FunctionsBetaNote(props: { projectId: string; version: number }) {
  const fns = useLoad(() => api.get<FunctionsList>(`/projects/${props.projectId}/functions`), [props.projectId, props.version]);
  return fns.data && fns.data.functions_beta_enrolled === false && fns.data.functions.length > 0 ? <Notice>{NOT_ENROLLED}</Notice> : null;
}

export function FunctionsTab(props: { project: Project }) {
  const fns = useLoad(() => api.get<FunctionsList>(`/projects/${props.project.id}/functions`), [props.project.id]);
  return (
    <section aria-labelledby="functions-title">
      <h2 id="functions-title">Functions</h2>
      {fns.data?.functions_beta_enrolled === false && fns.data.functions.length > 0 && <Notice>{NOT_ENROLLED}</Notice>}
      <ErrorNote error={fns.error} />
      {fns.loading && !fns.data && <Loading what="functions" />}
      {fns.data?.functions.length === 0 && <p>The live deployment has no functions: add .js or .ts files to its functions/ folder.</p>}
      <ul class="cards">
        {fns.data?.functions.map((fn) => (
          <FunctionCard key={fn.name} project={props.project} fn={fn} />
        ))}
      </ul>
    </section>
  );
}

/** One queued invocation with its result and console output, refreshed until it ends. */
export function InvocationView(props: { project: Project; item: string }) {
  const at = props.item.lastIndexOf('@');
  const name = decodeURIComponent(props.item.slice(0, at));
  const id = props.item.slice(at + 1);
  const inv = useLoad(
    () => api.get<Invocation>(`/projects/${props.project.id}/functions/${encodeURIComponent(name)}/invocations/${id}`),
    [name, id],
  );
  const refresh = useCallback(() => void inv.reload(), [inv.reload]);
  useInterval(refresh, 1000, !!inv.data && !TERMINAL.has(inv.data.status));
  const data = inv.data;
  return (
    <section aria-labelledby="invocation-title">
      <h2 id="invocation-title">
        Invocation {shortId(id)} of {name}
      </h2>
      <p>
        <Link href={`/projects/${props.project.id}/functions`}>All functions</Link>
      </p>
      <ErrorNote error={inv.error} />
      {!data && !inv.error && <Loading what="the invocation" />}
      {data && (
        <>
          <p role="status">
            Status: {data.status}
            {TERMINAL.has(data.status) ? '' : ' (refreshing)'}
          </p>
          {data.error_message && <p class="error">{data.error_message}</p>}
          {data.response_status !== undefined && (
            <>
              <h3>Response {data.response_status}</h3>
              <pre class="log">{decodeBody(data.response_body)}</pre>
            </>
          )}
          <h3>Console output</h3>
          {data.console && data.console.length > 0 ? (
            // biome-ignore lint/a11y: a scrollable log is focusable and named, so keyboard and screen-reader users reach it (axe: scrollable-region-focusable)
            <pre class="log" data-testid="console-output" tabIndex={0} aria-label="Console output">
              {data.console.map((l) => `${l.stream === 'stderr' ? '! ' : ''}${l.line}`).join('\n')}
            </pre>
          ) : (
            <p>{TERMINAL.has(data.status) ? 'The function wrote nothing to its console.' : 'Shown when the invocation ends.'}</p>
          )}
        </>
      )}
    </section>
  );
}
