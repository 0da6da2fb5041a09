import { useCallback, useState } from 'preact/hooks';
import { Link, navigate } from '../router.tsx';
import { api, canAdmin, useSession } from '../session.ts';
import { CopyButton, ErrorNote, Field, formatTime, Loading, Notice, Page, Select, useAction, useInterval, useLoad } from '../ui.tsx';
import type { Reply } from '../api.ts';
import type { Domain, Project } from '../api-types.ts';

/** States the platform moves on its own (verification, TLS): the page asks again until they settle. */
const unsettled = (d: Domain) =>
  d.status === 'pending_verification' ||
  d.status === 'awaiting_delegation' ||
  d.ssl_status === 'pending' ||
  d.ssl_status === 'provisioning';
const REFRESH_MS = 10_000;

export function DomainsTab(props: { project: Project }) {
  const session = useSession();
  const p = props.project;
  const list = useLoad(() => api.get<Reply<'/api/v1/projects/{id}/domains', 'get'>>(`/projects/${p.id}/domains`), [p.id]);
  const verified = (list.data?.domains ?? []).filter((d) => d.status === 'verified');
  return (
    <section aria-labelledby="domains-title">
      <h2 id="domains-title">Domains</h2>
      <ErrorNote error={list.error} />
      {list.loading && !list.data && <Loading what="domains" />}
      <ul>
        {list.data?.domains.map((d) => (
          <li key={d.id}>
            <Link href={`/domains/${d.id}`}>{d.domain}</Link>: {d.status.replace(/_/g, ' ')}, SSL {d.ssl_status}
          </li>
        ))}
      </ul>
      {list.data?.domains.length === 0 && <p>No custom domain yet.</p>}
      {canAdmin(session) && <AddDomainForm project={p} />}
      {canAdmin(session) && <PrimaryDomainForm project={p} verified={verified} />}
    </section>
  );
}

function AddDomainForm({ project: p }: { project: Project }) {
  const [domain, setDomain] = useState('');
  const [mode, setMode] = useState('byo_dns');
  const add = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const created = await add.run(() => api.post<Domain>(`/projects/${p.id}/domains`, { domain, connection_mode: mode }));
        if (created) navigate(`/domains/${created.id}`);
      }}
    >
      <h3>Add a domain</h3>
      <Field
        label="Domain"
        name="domain"
        placeholder="www.example.com"
        value={domain}
        required
        error={add.fields.domain}
        onInput={(e) => setDomain((e.target as HTMLInputElement).value)}
      />
      <Select
        label="DNS"
        name="connection_mode"
        value={mode}
        onChange={setMode}
        options={[
          ['byo_dns', 'I keep my DNS provider (records to set)'],
          ['managed_dns', 'The platform hosts the DNS zone (name servers to set)'],
        ]}
      />
      <ErrorNote error={add.error} />
      <button type="submit" disabled={add.busy}>
        {add.busy ? 'Adding…' : 'Add domain'}
      </button>
    </form>
  );
}

function PrimaryDomainForm({ project: p, verified }: { project: Project; verified: Domain[] }) {
  const primary = useAction();
  const [primaryId, setPrimaryId] = useState((p.primary_domain_id as string | null) ?? '');
  const [urlMode, setUrlMode] = useState((p.platform_url_mode as string | null) ?? 'redirect');
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        await primary.run(() => api.patch(`/projects/${p.id}`, { primary_domain_id: primaryId || null, platform_url_mode: urlMode }));
      }}
    >
      <h3>Primary domain</h3>
      <Select
        label="Primary domain"
        name="primary_domain_id"
        value={primaryId}
        onChange={setPrimaryId}
        error={primary.fields.primary_domain_id}
        options={[['', 'None: every hostname serves the site'], ...verified.map((d) => [d.id, d.domain] as [string, string])]}
      />
      <Select
        label="The platform address"
        name="platform_url_mode"
        value={urlMode}
        onChange={setUrlMode}
        options={[
          ['redirect', 'Redirects to the primary domain (301, cached 30 days)'],
          ['serve', 'Serves the site too'],
        ]}
      />
      <ErrorNote error={primary.error} />
      <button type="submit" disabled={primary.busy}>
        Save primary domain
      </button>
    </form>
  );
}

function Records(props: { d: Domain }) {
  const { d } = props;
  if (d.connection_mode === 'managed_dns' && d.cdn_dns_ns1) {
    return (
      <section aria-labelledby="records-title">
        <h2 id="records-title">Name servers to set at your registrar</h2>
        <ul>
          {[d.cdn_dns_ns1, d.cdn_dns_ns2].filter(Boolean).map((ns) => (
            <li key={ns}>
              <code>{ns}</code> <CopyButton text={ns!} label={`Copy ${ns}`} />
            </li>
          ))}
        </ul>
      </section>
    );
  }
  return (
    <section aria-labelledby="records-title">
      <h2 id="records-title">DNS records to set</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Note</th>
          </tr>
        </thead>
        <tbody>
          {(d.dns_records ?? []).map((r) => (
            <tr key={`${r.type}-${r.name}`}>
              <td>{r.type}</td>
              <td>
                <code>{r.name}</code> <CopyButton text={r.name} label={`Copy ${r.type} name`} />
              </td>
              <td>
                <code>{r.value}</code> <CopyButton text={r.value} label={`Copy ${r.type} value`} />
              </td>
              <td>{r.note}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function GeoPolicy(props: { d: Domain; onSaved: (d: Domain) => void }) {
  const [mode, setMode] = useState<string>(props.d.geo_mode);
  const [countries, setCountries] = useState(props.d.geo_countries.join(', '));
  const [note, setNote] = useState<string | null>(null);
  const action = useAction();
  if (!props.d.supports_geo_filtering) return <p>Country rules become available once the domain is verified and has its own pull zone.</p>;
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setNote(null);
        const list = countries
          .split(/[\s,]+/)
          .map((c) => c.trim().toUpperCase())
          .filter(Boolean);
        const saved = await action.run(() =>
          api.patch<Domain>(`/domains/${props.d.id}/geo-filter`, { geo_mode: mode, geo_countries: mode === 'off' ? [] : list }),
        );
        if (saved) {
          setNote('Country rules saved.');
          props.onSaved(saved);
        }
      }}
    >
      <h2>Country rules</h2>
      <Select
        label="Rule"
        name="geo_mode"
        value={mode}
        onChange={setMode}
        options={[
          ['off', 'Every country'],
          ['allowlist', 'Only these countries'],
          ['blocklist', 'Every country but these'],
        ]}
        error={action.fields.geo_mode}
      />
      <Field
        label="Countries (ISO codes like DE, US)"
        name="geo_countries"
        value={countries}
        error={action.fields.geo_countries}
        onInput={(e) => setCountries((e.target as HTMLInputElement).value)}
      />
      <ErrorNote error={action.error} />
      {note && <Notice>{note}</Notice>}
      <button type="submit" disabled={action.busy}>
        Save country rules
      </button>
    </form>
  );
}

export function DomainPage(props: { id: string }) {
  const session = useSession();
  const d = useLoad(() => api.get<Domain>(`/domains/${props.id}`), [props.id]);
  const action = useAction();
  const refresh = useCallback(() => void d.reload(), [d.reload]);
  useInterval(refresh, REFRESH_MS, !!d.data && unsettled(d.data));
  if (!d.data) return <Page title="Domain">{d.error ? <ErrorNote error={d.error} /> : <Loading what="the domain" />}</Page>;
  const dom = d.data;
  const act = (path: string) =>
    action.run(async () => {
      await api.post(path, {});
      await d.reload();
    });
  return (
    <Page title={dom.domain}>
      <p>
        <Link href={`/projects/${dom.project_id}/domains`}>Back to the project's domains</Link>
      </p>
      <dl class="facts" aria-live="polite">
        <dt>Verification</dt>
        <dd>
          {dom.status.replace(/_/g, ' ')}
          {dom.last_verification_attempt ? ` (last checked ${formatTime(dom.last_verification_attempt)})` : ''}
        </dd>
        <dt>SSL certificate</dt>
        <dd>
          {dom.ssl_status}
          {dom.ssl_error ? `: ${dom.ssl_error}` : ''}
          {dom.next_retry_at ? ` (next automatic try ${formatTime(dom.next_retry_at)})` : ''}
        </dd>
      </dl>
      {unsettled(dom) && <p class="hint">This page checks again every {REFRESH_MS / 1000} seconds.</p>}
      {dom.debug_url && (
        <p>
          <a href={dom.debug_url}>Diagnose the certificate</a>
        </p>
      )}
      <ErrorNote error={action.error} />
      <div class="actions">
        {dom.status !== 'verified' && (
          <button type="button" disabled={action.busy} onClick={() => act(`/domains/${dom.id}/verify`)}>
            Check DNS now
          </button>
        )}
        {dom.status === 'verified' && dom.ssl_status !== 'issued' && (
          <button type="button" disabled={action.busy} onClick={() => act(`/domains/${dom.id}/retry-ssl`)}>
            Retry SSL
          </button>
        )}
      </div>
      <Records d={dom} />
      {canAdmin(session) && <GeoPolicy d={dom} onSaved={() => void d.reload()} />}
      {canAdmin(session) && (
        <button
          type="button"
          class="danger-button"
          disabled={action.busy}
          onClick={async () => {
            if (!confirm(`Remove ${dom.domain} from the project?`)) return;
            if (await action.run(() => api.del(`/domains/${dom.id}`))) navigate(`/projects/${dom.project_id}/domains`);
          }}
        >
          Remove domain
        </button>
      )}
    </Page>
  );
}
