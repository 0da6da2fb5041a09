import { api } from '../session.ts';
import { ErrorNote, formatBytes, Loading, useLoad } from '../ui.tsx';
import type { Project, ProjectAnalytics } from '../api-types.ts';

/** Requests per day as bars: an SVG the page draws itself (no chart library), with the same numbers as a table beside it. */
function Chart(props: { days: ProjectAnalytics['days'] }) {
  const width = 640;
  const height = 160;
  const max = Math.max(1, ...props.days.map((d) => d.requests));
  const bar = width / Math.max(1, props.days.length);
  return (
    <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label={`Requests per day, highest ${max}`} class="chart">
      {props.days.map((d, i) => {
        const h = Math.round((d.requests / max) * height);
        return (
          <rect key={d.date} x={i * bar + 1} y={height - h} width={Math.max(1, bar - 2)} height={h} class="bar">
            <title>
              {d.date}: {d.requests} requests
            </title>
          </rect>
        );
      })}
      <line x1="0" y1={height} x2={width} y2={height} class="axis" />
    </svg>
  );
}

export function AnalyticsTab(props: { project: Project }) {
  const a = useLoad(() => api.get<ProjectAnalytics>(`/projects/${props.project.id}/analytics`), [props.project.id]);
  return (
    <section aria-labelledby="analytics-title">
      <h2 id="analytics-title">Analytics</h2>
      <ErrorNote error={a.error} />
      {!a.data && !a.error && <Loading what="analytics" />}
      {a.data && !a.data.analytics_enabled && <p>Analytics are switched off for this project (Settings).</p>}
      {a.data && (
        <>
          <p>
            {a.data.from} to {a.data.to}: {a.data.totals.requests} requests, {formatBytes(a.data.totals.bytes)} served.
          </p>
          <Chart days={a.data.days} />
          <details>
            <summary>Requests per day as a table</summary>
            <table>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Bytes</th>
                </tr>
              </thead>
              <tbody>
                {a.data.days.map((d) => (
                  <tr key={d.date}>
                    <td>{d.date}</td>
                    <td>{d.requests}</td>
                    <td>{formatBytes(d.bytes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
          <h3>Top paths</h3>
          {a.data.top_paths.length === 0 ? (
            <p>No requests yet.</p>
          ) : (
            <ol>
              {a.data.top_paths.map((p) => (
                <li key={p.path}>
                  {p.path}: {p.requests}
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  );
}
