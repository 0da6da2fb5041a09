import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../session.ts';
import { ErrorNote } from '../ui.tsx';
import type { Reply } from '../api.ts';

/**
 * A deployment's build log, followed while the build runs.
 *
 * Kept apart on purpose: builds (a separate piece of work) add
 * `GET /api/v1/projects/{id}/deployments/{deployment_id}/log?cursor={line}`,
 * answering `{lines: string[], next_cursor: number, done: boolean}`; this
 * component polls it every two seconds until `done`. Where that endpoint does
 * not exist yet (404 ROUTE_NOT_FOUND), it shows the lines the deployment
 * itself carries (`build_log`, the functions build) and says that live
 * following is not available.
 */
const FOLLOW_MS = 2000;
const RUNNING = new Set(['queued', 'building', 'uploading']);

export function BuildLog(props: { projectId: string; deploymentId: string; status: string; initial: string[] }) {
  const [lines, setLines] = useState<string[]>(props.initial);
  const [live, setLive] = useState<'following' | 'finished' | 'unavailable'>(RUNNING.has(props.status) ? 'following' : 'finished');
  const [error, setError] = useState<string | null>(null);
  const next = useRef(props.initial.length);

  useEffect(() => {
    if (live !== 'following') return undefined;
    let stopped = false;
    const path = `/projects/${props.projectId}/deployments/${props.deploymentId}/log`;
    const tick = async () => {
      try {
        const page = await api.get<Reply<'/api/v1/projects/{id}/deployments/{deployment_id}/log', 'get'>>(`${path}?cursor=${next.current}`);
        if (stopped) return;
        next.current = page.next_cursor;
        if (page.lines.length) setLines((old) => [...old, ...page.lines]);
        if (page.done) setLive('finished');
        else timer = setTimeout(tick, FOLLOW_MS);
      } catch (e) {
        if (stopped) return;
        if ((e as { code?: string }).code === 'ROUTE_NOT_FOUND') setLive('unavailable');
        else setError('The build log could not be read; it is tried again in a moment.');
        timer = setTimeout(tick, FOLLOW_MS * 2);
      }
    };
    let timer = setTimeout(tick, 0);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [live, props.projectId, props.deploymentId]);

  return (
    <section aria-labelledby="build-log-title">
      <h2 id="build-log-title">Build log</h2>
      <p role="status">
        {live === 'following'
          ? 'Following the build as it runs…'
          : live === 'unavailable'
            ? 'Live following of builds is not available on this platform yet.'
            : ''}
      </p>
      <ErrorNote error={error} />
      {lines.length ? (
        // biome-ignore lint/a11y: a scrollable log is focusable and named, so keyboard and screen-reader users reach it (axe: scrollable-region-focusable)
        <pre class="log" tabIndex={0} aria-label="Build log lines">
          {lines.join('\n')}
        </pre>
      ) : (
        <p>No build output.</p>
      )}
    </section>
  );
}

/** Re-exported so a page can tell whether a deployment is still building. */
export const isRunning = (status: string) => RUNNING.has(status);
