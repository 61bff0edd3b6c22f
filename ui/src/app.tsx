/** Routes and the signed-in layout: header (namespace, sign out), the "Mounts" and "System" navigation, the page. */
import { Link, Route, Router, Switch, useLocation } from 'wouter-preact';
import { useEffect } from 'preact/hooks';
import { endSession, useSession } from './api/session';
import { Announcer } from './components/announcer';
import { MountsNav } from './components/mounts-nav';
import { NamespaceSelect } from './components/namespace-select';
import { HomePage } from './pages/home';
import { MountPage } from './pages/mount-page';
import { SignInPage } from './pages/sign-in';
import { SealPage } from './pages/seal';
import { PoliciesPage, PolicyPage } from './pages/policies';
import { MountsAdminPage } from './pages/mounts-admin';
import { LeasesPage } from './pages/leases';
import { AuditPage } from './pages/audit';
import { PasswordPoliciesPage } from './pages/password-policies';
import { NamespacesPage } from './pages/namespaces';
import { StatusPage } from './pages/status';

const SYSTEM_LINKS: Array<[string, string]> = [
  ['/sys/status', 'Status'],
  ['/sys/seal', 'Seal'],
  ['/sys/policies', 'Policies'],
  ['/sys/mounts', 'Secrets engines'],
  ['/sys/auth', 'Auth methods'],
  ['/sys/leases', 'Leases'],
  ['/sys/audit', 'Audit devices'],
  ['/sys/password-policies', 'Password policies'],
  ['/sys/namespaces', 'Namespaces'],
];

function Shell() {
  const session = useSession();
  const [location, navigate] = useLocation();
  useEffect(() => {
    // Unsealing needs no token: the seal page is open without a session.
    if (!session && location !== '/sign-in' && location !== '/sys/seal') navigate('/sign-in', { replace: true });
  }, [session, location]);
  if (!session) {
    return (
      <div class="page narrow">
        <header class="top">
          <span class="brand">Strongroom</span>
        </header>
        <main id="main">
          <Switch>
            <Route path="/sys/seal" component={SealPage} />
            <Route component={SignInPage} />
          </Switch>
        </main>
      </div>
    );
  }
  return (
    <div class="page">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Strongroom
        </Link>
        <NamespaceSelect session={session} />
        <button
          type="button"
          onClick={() => {
            endSession();
            navigate('/sign-in');
          }}
        >
          Sign out
        </button>
      </header>
      <div class="layout">
        <div class="sidebar">
          <MountsNav namespace={session.namespace} />
          <nav aria-label="System">
            <h2>System</h2>
            <ul>
              {SYSTEM_LINKS.map(([href, label]) => (
                <li key={href}>
                  <Link href={href} aria-current={location === href || location.startsWith(`${href}/`) ? 'page' : undefined}>
                    {label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
        </div>
        <main id="main" tabIndex={-1}>
          <Switch>
            <Route path="/" component={HomePage} />
            <Route path="/sign-in" component={HomePage} />
            <Route path="/secrets/*">{(p) => <MountPage table="secret" rest={p['*'] ?? ''} />}</Route>
            <Route path="/auth/*">{(p) => <MountPage table="auth" rest={p['*'] ?? ''} />}</Route>
            <Route path="/sys/status" component={StatusPage} />
            <Route path="/sys/seal" component={SealPage} />
            <Route path="/sys/policies" component={PoliciesPage} />
            <Route path="/sys/policies/:name">{(p) => <PolicyPage name={p.name} />}</Route>
            <Route path="/sys/mounts">{() => <MountsAdminPage table="secret" />}</Route>
            <Route path="/sys/auth">{() => <MountsAdminPage table="auth" />}</Route>
            <Route path="/sys/leases" component={LeasesPage} />
            <Route path="/sys/audit" component={AuditPage} />
            <Route path="/sys/password-policies" component={PasswordPoliciesPage} />
            <Route path="/sys/namespaces" component={NamespacesPage} />
            <Route>
              <h1>Not found</h1>
              <p>There is no page here.</p>
            </Route>
          </Switch>
        </main>
      </div>
    </div>
  );
}

export function App() {
  return (
    <Router base="/ui">
      <Shell />
      <Announcer />
    </Router>
  );
}
