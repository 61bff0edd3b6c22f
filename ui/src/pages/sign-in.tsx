/**
 * Sign in with a token, userpass or AppRole. A token is checked with
 * lookup-self; a login's client token is kept. Either way the token goes to
 * sessionStorage only.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type Envelope } from '../api/client';
import { normalizeNamespace, startSession } from '../api/session';
import { announce } from '../components/announcer';
import { ErrorMessage } from '../components/error-message';

type Method = 'token' | 'userpass' | 'approle';
const DEFAULT_MOUNT: Record<Method, string> = { token: '', userpass: 'userpass/', approle: 'approle/' };

export function SignInPage() {
  const [, navigate] = useLocation();
  const [method, setMethod] = useState<Method>('token');
  const [token, setToken] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [roleId, setRoleId] = useState('');
  const [secretId, setSecretId] = useState('');
  const [mountPath, setMountPath] = useState('');
  const [namespace, setNamespace] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [sealed, setSealed] = useState(false);

  useEffect(() => {
    api.anonymous.read<{ sealed?: boolean }>('sys/seal-status').then((s) => setSealed(s.sealed === true), () => undefined);
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    const ns = normalizeNamespace(namespace);
    const mount = `auth/${(mountPath.trim() || DEFAULT_MOUNT[method]).replace(/^\/+|\/+$/g, '')}`;
    try {
      let clientToken: string;
      if (method === 'token') {
        await api.anonymous.lookupSelf(token.trim(), ns);
        clientToken = token.trim();
      } else {
        const r =
          method === 'userpass'
            ? await api.anonymous.write<Envelope>(`${mount}/login/${encodeURIComponent(username.trim())}`, { password }, ns)
            : await api.anonymous.write<Envelope>(`${mount}/login`, { role_id: roleId.trim(), secret_id: secretId.trim() }, ns);
        if (!r.auth?.client_token) throw new Error('the server answered without a token');
        clientToken = r.auth.client_token;
      }
      startSession(clientToken, ns);
      announce('Signed in');
      navigate('/');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card sign-in">
      <h1>Sign in</h1>
      {sealed && (
        <p role="status">
          The server is sealed. <Link href="/sys/seal">Unseal it</Link>.
        </p>
      )}
      <form onSubmit={submit}>
        <div class="field">
          <label for="method">Method</label>
          <select id="method" value={method} onChange={(e) => setMethod((e.currentTarget as HTMLSelectElement).value as Method)}>
            <option value="token">Token</option>
            <option value="userpass">Username</option>
            <option value="approle">AppRole</option>
          </select>
        </div>
        {method === 'token' && (
          <div class="field">
            <label for="token">Token</label>
            <input id="token" type="password" autoComplete="off" value={token} required onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)} />
          </div>
        )}
        {method === 'userpass' && (
          <>
            <div class="field">
              <label for="username">Username</label>
              <input id="username" autoComplete="username" value={username} required onInput={(e) => setUsername((e.currentTarget as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="password">Password</label>
              <input id="password" type="password" autoComplete="current-password" value={password} required onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />
            </div>
          </>
        )}
        {method === 'approle' && (
          <>
            <div class="field">
              <label for="role-id">Role ID</label>
              <input id="role-id" autoComplete="off" value={roleId} required onInput={(e) => setRoleId((e.currentTarget as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="secret-id">Secret ID</label>
              <input id="secret-id" type="password" autoComplete="off" value={secretId} onInput={(e) => setSecretId((e.currentTarget as HTMLInputElement).value)} />
            </div>
          </>
        )}
        {method !== 'token' && (
          <div class="field">
            <label for="mount-path">Mount path</label>
            <input id="mount-path" placeholder={DEFAULT_MOUNT[method]} aria-describedby="mount-path-hint" value={mountPath} onInput={(e) => setMountPath((e.currentTarget as HTMLInputElement).value)} />
            <small id="mount-path-hint" class="hint">
              Where the method is enabled; {DEFAULT_MOUNT[method]} when empty.
            </small>
          </div>
        )}
        <div class="field">
          <label for="namespace">Namespace</label>
          <input id="namespace" placeholder="root" aria-describedby="namespace-hint" value={namespace} onInput={(e) => setNamespace((e.currentTarget as HTMLInputElement).value)} />
          <small id="namespace-hint" class="hint">
            Empty for the root namespace, else its path (acme/dev).
          </small>
        </div>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </div>
      </form>
    </section>
  );
}
