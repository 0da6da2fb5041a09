import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { AbuseReportPage } from './pages/abuse.tsx';
import { AccountPage, ConfirmEmailPage, useUnreadNotices } from './pages/account.tsx';
import { AdminPage } from './pages/admin.tsx';
import { DomainPage } from './pages/domains.tsx';
import { InvitationsPage } from './pages/invitations.tsx';
import { ProjectPage } from './pages/project.tsx';
import { NewProjectPage, ProjectsPage } from './pages/projects.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { TeamPage } from './pages/team.tsx';
import { Link, match, navigate, usePath } from './router.tsx';
import { chooseTeam, loadSession, signOut, useSession } from './session.ts';
import { Loading } from './ui.tsx';

/** Pages anyone may open, signed in or not. */
const PUBLIC: Record<string, () => preact.JSX.Element> = {
  '/sign-in': () => <SignInPage />,
  '/report-abuse': () => <AbuseReportPage />,
  '/confirm-email': () => <ConfirmEmailPage />,
};

function Routes(props: { path: string }) {
  const { path } = props;
  if (path === '/') return <ProjectsPage />;
  if (path === '/new') return <NewProjectPage />;
  if (path === '/team') return <TeamPage />;
  if (path === '/account') return <AccountPage />;
  if (path === '/invitations') return <InvitationsPage />;
  if (path === '/admin') return <AdminPage />;
  const domain = match('/domains/:id', path);
  if (domain) return <DomainPage id={domain.id!} />;
  const project = match('/projects/:id', path) ?? match('/projects/:id/:tab', path) ?? match('/projects/:id/:tab/:item', path);
  if (project) return <ProjectPage id={project.id!} tab={project.tab ?? 'deployments'} item={project.item ?? null} />;
  return (
    <>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. <Link href="/">Go to your projects</Link>.
      </p>
    </>
  );
}

function Header() {
  const session = useSession();
  const path = usePath();
  const unread = useUnreadNotices(session.team?.id ?? null);
  const nav: [string, string][] = [
    ['/', 'Projects'],
    ['/team', 'Team'],
    ['/account', unread ? `Account (${unread} unread)` : 'Account'],
    ...(session.me?.is_platform_admin ? ([['/admin', 'Admin']] as [string, string][]) : []),
  ];
  return (
    <header class="top">
      <Link href="/" class="brand">
        Slipway
      </Link>
      <nav aria-label="Main">
        {nav.map(([href, text]) => (
          <Link key={href} href={href} current={href === '/' ? path === '/' || path.startsWith('/projects') : path.startsWith(href)}>
            {text}
          </Link>
        ))}
      </nav>
      {session.teams.length > 0 && (
        <div class="team-switch">
          <label for="team-switch">Team</label>
          <select id="team-switch" value={session.team?.id} onChange={(e) => chooseTeam((e.target as HTMLSelectElement).value)}>
            {session.teams.map((t) => (
              <option key={t.id} value={t.id}>
                {t.display_label} ({t.role})
              </option>
            ))}
          </select>
        </div>
      )}
      <button
        type="button"
        class="link-button"
        onClick={async () => {
          await signOut().catch(() => undefined);
          navigate('/sign-in');
        }}
      >
        Sign out {session.me?.email}
      </button>
    </header>
  );
}

function App() {
  const session = useSession();
  const path = usePath();
  useEffect(() => {
    void loadSession();
  }, []);
  // Moves focus to the new page's heading, so keyboard and screen-reader users land on it.
  useEffect(() => {
    document.getElementById('page-title')?.focus();
  }, [path, session.loading]);

  const publicPage = PUBLIC[path];
  let content;
  if (publicPage) content = publicPage();
  else if (session.loading && !session.me) content = <Loading what="your account" />;
  else if (!session.me) content = <SignInPage />;
  else if (!session.team) content = <InvitationsPage />;
  else content = <Routes path={path} />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      {session.me && !publicPage ? (
        <Header />
      ) : (
        <header class="top">
          <Link href="/" class="brand">
            Slipway
          </Link>
        </header>
      )}
      <main id="main">{content}</main>
      <footer class="bottom">
        <Link href="/report-abuse">Report abuse</Link>
      </footer>
    </>
  );
}

render(<App />, document.getElementById('app')!);
