import { useState } from 'preact/hooks';
import { api, canAdmin, loadSession, useSession } from '../session.ts';
import { ErrorNote, Field, formatTime, Notice, Page, useAction, useLoad } from '../ui.tsx';
import { ApiKeys, Invitations, Members, Transfer } from './team-access.tsx';
import type { IdentityProviderDiscovery, Member } from '../api-types.ts';

function Profile() {
  const session = useSession();
  const team = session.team!;
  const [name, setName] = useState(team.name);
  const [slug, setSlug] = useState(team.slug);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  return (
    <section aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      {!team.slug_chosen_at && <Notice>The team's address {team.slug} was picked for you. Choose your own below.</Notice>}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          if (await action.run(() => api.patch('/team/profile', { name, ...(slug !== team.slug ? { slug } : {}) }))) {
            setSaved(true);
            await loadSession();
          }
        }}
      >
        <fieldset disabled={!canAdmin(session)}>
          <Field
            label="Team name"
            name="name"
            value={name}
            required
            error={action.fields.name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
          <Field
            label="Slug"
            name="slug"
            value={slug}
            error={action.fields.slug}
            hint="Changing it keeps the old slug working for 30 days (answered with a deprecation notice), then it is freed."
            onInput={(e) => setSlug((e.target as HTMLInputElement).value)}
          />
        </fieldset>
        <ErrorNote error={action.error} />
        {saved && <Notice>Profile saved.</Notice>}
        {canAdmin(session) && (
          <button type="submit" disabled={action.busy}>
            Save profile
          </button>
        )}
      </form>
    </section>
  );
}

function SsoPreview() {
  const [issuer, setIssuer] = useState('');
  const [found, setFound] = useState<IdentityProviderDiscovery | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="sso-title">
      <h2 id="sso-title">Single sign-on: check an identity provider</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setFound((await action.run(() => api.post<IdentityProviderDiscovery>('/team/sso/discover', { issuer }))) ?? null);
        }}
      >
        <Field
          label="Issuer address"
          name="issuer"
          type="url"
          placeholder="https://id.example.com/realms/main"
          value={issuer}
          error={action.fields.issuer}
          onInput={(e) => setIssuer((e.target as HTMLInputElement).value)}
        />
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Checking…' : 'Check the provider'}
        </button>
      </form>
      {found && (
        <dl class="facts">
          <dt>Issuer</dt>
          <dd>{found.issuer}</dd>
          <dt>Provider</dt>
          <dd>{found.provider}</dd>
          <dt>Register this callback</dt>
          <dd>
            <code>{found.redirect_uri}</code>
          </dd>
          <dt>Suggested name</dt>
          <dd>{found.suggested_name}</dd>
          {found.suggested_issuer && (
            <>
              <dt>Did you mean</dt>
              <dd>{found.suggested_issuer}</dd>
            </>
          )}
          {found.warnings.map((w) => (
            <>
              <dt key={w.code}>Warning</dt>
              <dd>
                {w.message} <a href={w.docs_url}>More</a>
              </dd>
            </>
          ))}
        </dl>
      )}
    </section>
  );
}

function GitConnect() {
  const session = useSession();
  const action = useAction();
  return (
    <section aria-labelledby="git-title">
      <h2 id="git-title">Git hosting</h2>
      <p>Connect the Git hosting app to deploy the team's repositories.</p>
      <ErrorNote error={action.error} />
      <button
        type="button"
        disabled={action.busy}
        onClick={async () => {
          const link = await action.run(() => api.get<{ install_url: string }>(`/auth/git-host/connect?team_id=${session.team!.id}`));
          if (link) location.assign(link.install_url);
        }}
      >
        Connect Git hosting
      </button>
    </section>
  );
}

function Deletion() {
  const session = useSession();
  const action = useAction();
  const d = session.team!.deletion;
  const pending = d.status === 'pending_deletion';
  if (session.team!.role !== 'owner') return null;
  const change = (method: 'POST' | 'DELETE') =>
    action.run(async () => {
      await api.call(method, '/team/deletion', method === 'POST' ? { body: {} } : {});
      await loadSession();
    });
  return (
    <section aria-labelledby="deletion-title" class="danger">
      <h2 id="deletion-title">Delete the team</h2>
      {pending ? (
        <>
          <Notice>
            Deletion is requested: the team and everything it owns are purged after {formatTime(d.purge_after)} unless you cancel.
          </Notice>
          <button type="button" disabled={action.busy} onClick={() => change('DELETE')}>
            Cancel the deletion
          </button>
        </>
      ) : (
        <>
          <p>The team stays usable during a grace period, and you can cancel until it ends.</p>
          <button
            type="button"
            class="danger-button"
            disabled={action.busy}
            onClick={() => confirm('Delete the whole team?') && change('POST')}
          >
            Request deletion
          </button>
        </>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}

export function TeamPage() {
  const session = useSession();
  const members = useLoad(() => api.get<Member[]>('/team/members'), [session.team?.id]);
  const admin = canAdmin(session);
  return (
    <Page title={`Team ${session.team?.display_label ?? ''}`}>
      <Profile key={session.team?.id} />
      <Members session={session} members={members.data ?? []} reload={() => void members.reload()} error={members.error} />
      <Transfer members={members.data ?? []} session={session} onDone={() => void members.reload()} />
      {admin && <Invitations key={`i-${session.team?.id}`} />}
      {admin && <ApiKeys key={`k-${session.team?.id}`} />}
      {admin && <SsoPreview />}
      {admin && <GitConnect />}
      <Deletion />
    </Page>
  );
}
