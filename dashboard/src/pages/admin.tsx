import { useState } from 'preact/hooks';
import { api, useSession } from '../session.ts';
import { Checkbox, ErrorNote, Field, formatTime, Loading, Notice, Page, Select, useAction, useLoad } from '../ui.tsx';
import type { Reply } from '../api.ts';
import type { AbuseScan } from '../api-types.ts';

function ScanRow(props: { scan: AbuseScan; onReviewed: () => void }) {
  const [resolution, setResolution] = useState('');
  const action = useAction();
  const s = props.scan;
  const review = (status: 'dismissed' | 'actioned') =>
    action.run(async () => {
      await api.post(`/admin/abuse-scans/${s.id}/review`, { review_status: status, resolution: resolution || null }, { team: null });
      props.onReviewed();
    });
  return (
    <li class="card wide">
      <h3>{s.site_host}</h3>
      <p>
        {s.team_name} · branch {s.branch} · score {s.score} · priority {s.priority} · {s.report_count} abuse report
        {s.report_count === 1 ? '' : 's'} · scanned {formatTime(s.scanned_at)}
      </p>
      <p>Matches: {s.matches.map((m) => `${m.category} (${m.hits})`).join(', ') || 'none'}</p>
      {s.review_status === 'new' && (
        <>
          <Field
            label={`Resolution for ${s.site_host}`}
            name="resolution"
            value={resolution}
            onInput={(e) => setResolution((e.target as HTMLInputElement).value)}
          />
          <ErrorNote error={action.error} />
          <button type="button" disabled={action.busy} onClick={() => review('actioned')}>
            Mark {s.site_host} actioned
          </button>{' '}
          <button type="button" disabled={action.busy} onClick={() => review('dismissed')}>
            Dismiss {s.site_host}
          </button>
        </>
      )}
    </li>
  );
}

function AbuseScans() {
  const [status, setStatus] = useState('new');
  const list = useLoad(
    () => api.get<Reply<'/api/v1/admin/abuse-scans', 'get'>>(`/admin/abuse-scans?review_status=${status}&page_size=50`, { team: null }),
    [status],
  );
  return (
    <section aria-labelledby="scans-title">
      <h2 id="scans-title">Abuse review</h2>
      <p>Keyword scans of published sites, reported projects first.</p>
      <Select
        label="Show"
        name="review_status"
        value={status}
        onChange={setStatus}
        options={[
          ['new', 'To review'],
          ['actioned', 'Actioned'],
          ['dismissed', 'Dismissed'],
        ]}
      />
      <ErrorNote error={list.error} />
      {list.loading && !list.data && <Loading what="scans" />}
      {list.data && <p>{list.data.total} scans.</p>}
      <ul class="cards">
        {list.data?.scans.map((s) => (
          <ScanRow key={s.id} scan={s} onReviewed={() => void list.reload()} />
        ))}
      </ul>
    </section>
  );
}

function Attention() {
  const a = useLoad(() => api.get<Record<string, unknown>>('/admin/attention', { team: null }), []);
  const count = (value: unknown): number =>
    Array.isArray(value)
      ? value.length
      : value && typeof value === 'object'
        ? Object.values(value).reduce((n: number, v) => n + count(v), 0)
        : 0;
  return (
    <section aria-labelledby="attention-title">
      <h2 id="attention-title">Attention queues</h2>
      <ErrorNote error={a.error} />
      {a.data && (
        <ul>
          {Object.entries(a.data).map(([queue, rows]) => (
            <li key={queue}>
              <details>
                <summary>
                  {queue.replace(/_/g, ' ')}: {count(rows)}
                </summary>
                <pre class="log">{JSON.stringify(rows, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function TeamTools() {
  const [teamId, setTeamId] = useState('');
  const [hold, setHold] = useState(true);
  const [telemetry, setTelemetry] = useState<unknown>(null);
  const [held, setHeld] = useState<string | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="team-tools-title">
      <h2 id="team-tools-title">A team's functions telemetry and legal hold</h2>
      <Field label="Team id (UUID)" name="team_id" value={teamId} onInput={(e) => setTeamId((e.target as HTMLInputElement).value.trim())} />
      <ErrorNote error={action.error} />
      <button
        type="button"
        disabled={action.busy || !teamId}
        onClick={async () => setTelemetry((await action.run(() => api.get(`/admin/teams/${teamId}/functions`, { team: null }))) ?? null)}
      >
        Show functions telemetry
      </button>
      <Checkbox label="Hold: block the purge of this team" name="hold" checked={hold} onChange={setHold} />
      <button
        type="button"
        disabled={action.busy || !teamId}
        onClick={async () => {
          if (await action.run(() => api.post(`/admin/teams/${teamId}/legal-hold`, { hold }, { team: null })))
            setHeld(hold ? 'Legal hold set.' : 'Legal hold lifted.');
        }}
      >
        Save legal hold
      </button>
      {held && <Notice>{held}</Notice>}
      {telemetry !== null && (
        // biome-ignore lint/a11y: a scrollable log is focusable and named, so keyboard and screen-reader users reach it (axe: scrollable-region-focusable)
        <pre class="log" tabIndex={0} aria-label="Functions telemetry">
          {JSON.stringify(telemetry, null, 2)}
        </pre>
      )}
    </section>
  );
}

function Deletions() {
  const list = useLoad(
    async () => (await api.get<Reply<'/api/v1/admin/deletions', 'get'>>('/admin/deletions', { team: null })).deletions,
    [],
  );
  return (
    <section aria-labelledby="deletions-title">
      <h2 id="deletions-title">Teams pending deletion</h2>
      <ErrorNote error={list.error} />
      {list.data?.length === 0 && <p>None.</p>}
      <ul>
        {list.data?.map((d) => (
          <li key={d.team_id}>
            {d.team_name} ({d.team_id}): purge after {formatTime(d.purge_after)}
            {d.legal_hold ? ', on legal hold' : ''}
            {d.overdue ? ', overdue' : ''}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function AdminPage() {
  const session = useSession();
  if (!session.me?.is_platform_admin)
    return (
      <Page title="Administration">
        <p>This page is for platform administrators.</p>
      </Page>
    );
  return (
    <Page title="Administration">
      <AbuseScans />
      <Attention />
      <TeamTools />
      <Deletions />
    </Page>
  );
}
