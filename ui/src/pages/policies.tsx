/** ACL policies: the list, and an editor whose text the server checks when it is saved. */
import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, ApiError } from '../api/client';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';

export function PoliciesPage() {
  const [, navigate] = useLocation();
  const [names, setNames] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  useEffect(() => {
    api.list('sys/policies/acl').then((r) => setNames(r.keys), setError);
  }, []);
  return (
    <section>
      <h1>ACL policies</h1>
      <ErrorMessage error={error} />
      {names && (
        <ul class="keys" aria-label="Policies">
          {names.map((n) => (
            <li key={n}>
              <Link href={`/sys/policies/${encodeURIComponent(n)}`}>{n}</Link>
            </li>
          ))}
        </ul>
      )}
      <form
        class="inline"
        aria-label="Create policy"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim()) navigate(`/sys/policies/${encodeURIComponent(name.trim())}`);
        }}
      >
        <label>
          <span>Policy name</span>
          <input aria-label="Policy name" required value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit">Create policy</button>
      </form>
    </section>
  );
}

export function PolicyPage({ name }: { name: string }) {
  const [, navigate] = useLocation();
  const [text, setText] = useState<string | null>(null);
  const [isNew, setIsNew] = useState(false);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [saveError, setSaveError] = useState<unknown>(null);
  useEffect(() => {
    api.read<{ policy: string }>(`sys/policies/acl/${encodeURIComponent(name)}`).then(
      (r) => setText(r.data?.policy ?? ''),
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 404) {
          setIsNew(true);
          setText('path "secret/data/*" {\n  capabilities = ["read"]\n}\n');
        } else setLoadError(err);
      },
    );
  }, [name]);
  const save = async (e: Event) => {
    e.preventDefault();
    setSaveError(null);
    try {
      await api.put(`sys/policies/acl/${encodeURIComponent(name)}`, { policy: text ?? '' });
      setIsNew(false);
      announce(`Policy ${name} saved`);
    } catch (err) {
      setSaveError(err);
    }
  };
  const builtIn = name === 'root';
  return (
    <section>
      <nav aria-label="Breadcrumb" class="crumbs">
        <ol>
          <li>
            <Link href="/sys/policies">Policies</Link>
          </li>
          <li>
            <span aria-current="page">{name}</span>
          </li>
        </ol>
      </nav>
      <h1>Policy {name}</h1>
      <ErrorMessage error={loadError} />
      {text !== null && (
        <form onSubmit={save}>
          <div class="field">
            <label for="policy-text">Policy</label>
            <textarea
              id="policy-text"
              class="code"
              rows={16}
              spellcheck={false}
              readOnly={builtIn}
              aria-invalid={saveError ? true : undefined}
              aria-describedby={saveError ? 'policy-error policy-hint' : 'policy-hint'}
              value={text}
              onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
            />
            <small id="policy-hint" class="hint">
              HCL or JSON, as Vault writes policies; the server checks it when it is saved.
            </small>
            <ErrorMessage id="policy-error" error={saveError} />
          </div>
          {!builtIn && (
            <div class="actions">
              <button type="submit">Save</button>
              {!isNew && name !== 'default' && (
                <ConfirmButton
                  label="Delete"
                  onConfirm={async () => {
                    try {
                      await api.delete(`sys/policies/acl/${encodeURIComponent(name)}`);
                      announce(`Policy ${name} deleted`);
                      navigate('/sys/policies');
                    } catch (err) {
                      setSaveError(err);
                    }
                  }}
                />
              )}
            </div>
          )}
        </form>
      )}
    </section>
  );
}
