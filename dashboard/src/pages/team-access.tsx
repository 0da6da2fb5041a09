import { useState } from 'preact/hooks';
import { api, loadSession, type Session } from '../session.ts';
import { CopyButton, ErrorNote, Field, formatTime, Notice, Select, useAction, useLoad } from '../ui.tsx';
import type { ApiKey, Invitation, Member, NewApiKey } from '../api-types.ts';

const ROLES: [string, string][] = [
  ['member', 'Member'],
  ['admin', 'Admin'],
];

export function Members(props: { session: Session; members: Member[]; reload: () => void; error: string | null }) {
  const action = useAction();
  const isAdmin = props.session.team?.role !== 'member';
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members and roles</h2>
      <ErrorNote error={action.error ?? props.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Role</th>
            {isAdmin && <th scope="col">Action</th>}
          </tr>
        </thead>
        <tbody>
          {props.members.map((m) => (
            <tr key={m.user_id}>
              <td>{m.name ? `${m.name} (${m.email})` : m.email}</td>
              <td>
                {isAdmin && m.role !== 'owner' ? (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={action.busy}
                    onChange={(e) =>
                      action.run(async () => {
                        await api.patch(`/team/members/${m.user_id}`, { role: (e.target as HTMLSelectElement).value });
                        props.reload();
                      })
                    }
                  >
                    {ROLES.map(([v, t]) => (
                      <option key={v} value={v}>
                        {t}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              {isAdmin && (
                <td>
                  {m.role !== 'owner' && (
                    <button
                      type="button"
                      class="small"
                      disabled={action.busy}
                      onClick={() =>
                        confirm(`Remove ${m.email} from the team?`) &&
                        action.run(async () => {
                          await api.del(`/team/members/${m.user_id}`);
                          props.reload();
                        })
                      }
                    >
                      Remove {m.email}
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function Invitations() {
  const list = useLoad(() => api.get<Invitation[]>('/team/invitations'), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const action = useAction();
  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <ErrorNote error={list.error} />
      <ul>
        {list.data?.map((i) => (
          <li key={i.id}>
            {i.email} as {i.role}: {i.status}, expires {formatTime(i.expires_at)}{' '}
            {i.status === 'pending' && (
              <button
                type="button"
                class="small"
                disabled={action.busy}
                onClick={() =>
                  action.run(async () => {
                    await api.del(`/team/invitations/${i.id}`);
                    await list.reload();
                  })
                }
              >
                Revoke the invitation of {i.email}
              </button>
            )}
          </li>
        ))}
      </ul>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (await action.run(() => api.post('/team/invitations', { email, role }))) {
            setEmail('');
            await list.reload();
          }
        }}
      >
        <Field
          label="Invite by e-mail"
          name="email"
          type="email"
          value={email}
          required
          error={action.fields.email}
          onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
        />
        <Select label="As" name="role" value={role} options={ROLES} onChange={setRole} />
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy}>
          Send invitation
        </button>
      </form>
    </section>
  );
}

export function ApiKeys() {
  const list = useLoad(() => api.get<ApiKey[]>('/team/api-keys'), []);
  const [name, setName] = useState('');
  const [role, setRole] = useState('member');
  const [made, setMade] = useState<NewApiKey | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p>A key acts in this team with its role, for the CLI and scripts. Its token is shown once, when it is made.</p>
      <ErrorNote error={list.error} />
      <ul>
        {list.data?.map((k) => (
          <li key={k.id}>
            <code>{k.prefix}…</code> {k.name} ({k.role}), made {formatTime(k.created_at)}
            {k.revoked_at ? `, revoked ${formatTime(k.revoked_at)}` : ' '}
            {!k.revoked_at && (
              <button
                type="button"
                class="small"
                disabled={action.busy}
                onClick={() =>
                  action.run(async () => {
                    await api.del(`/team/api-keys/${k.id}`);
                    await list.reload();
                  })
                }
              >
                Revoke {k.name}
              </button>
            )}
          </li>
        ))}
      </ul>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const key = await action.run(() => api.post<NewApiKey>('/team/api-keys', { name, role }));
          if (key) {
            setMade(key);
            setName('');
            await list.reload();
          }
        }}
      >
        <Field
          label="Key name"
          name="name"
          value={name}
          required
          error={action.fields.name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <Select label="Role" name="role" value={role} options={ROLES} onChange={setRole} />
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy}>
          Make a key
        </button>
      </form>
      {made && (
        <Notice>
          Copy the token of {made.name} now; it is not shown again: <code>{made.token}</code>{' '}
          <CopyButton text={made.token} label="Copy the token" />
        </Notice>
      )}
    </section>
  );
}

export function Transfer(props: { members: Member[]; session: Session; onDone: () => void }) {
  const candidates = props.members.filter((m) => m.role !== 'owner');
  const [target, setTarget] = useState('');
  const action = useAction();
  if (props.session.team?.role !== 'owner') return null;
  return (
    <section aria-labelledby="transfer-title">
      <h2 id="transfer-title">Transfer ownership</h2>
      <p>The new owner gets every right over the team; you become an admin.</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!target) return action.setError('Choose the member who becomes the owner.');
          const person = candidates.find((m) => m.user_id === target);
          if (!confirm(`Make ${person?.email} the owner? You become an admin.`)) return;
          if (await action.run(() => api.post('/team/members/transfer', { new_owner_id: target }))) {
            await loadSession();
            props.onDone();
          }
        }}
      >
        <Select
          label="New owner"
          name="new_owner_id"
          value={target}
          onChange={setTarget}
          error={action.fields.new_owner_id}
          options={[['', 'Choose a member'], ...candidates.map((m) => [m.user_id, `${m.email} (${m.role})`] as [string, string])]}
        />
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy || candidates.length === 0}>
          Transfer ownership
        </button>
      </form>
    </section>
  );
}
