/** Password policies: list, edit (checked by the server, which generates from it before saving), generate a sample. */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api/client';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';
import { MaskedValue } from '../components/masked-value';

const EXAMPLE = 'length = 20\nrule "charset" {\n  charset = "abcdefghijklmnopqrstuvwxyz"\n  min-chars = 1\n}\nrule "charset" {\n  charset = "0123456789"\n  min-chars = 1\n}\n';

export function PasswordPoliciesPage() {
  const [names, setNames] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  const [tick, setTick] = useState(0);
  useEffect(() => {
    api.list('sys/policies/password').then((r) => setNames(r.keys), setError);
  }, [tick]);
  return (
    <section>
      <h1>Password policies</h1>
      <ErrorMessage error={error} />
      {names && names.length === 0 && <p>No password policy yet.</p>}
      {names && names.length > 0 && (
        <ul class="keys" aria-label="Password policies">
          {names.map((n) => (
            <li key={n}>
              <button type="button" class="link" aria-current={selected === n ? 'true' : undefined} onClick={() => setSelected(n)}>
                {n}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        class="inline"
        aria-label="New password policy"
        onSubmit={(e) => {
          e.preventDefault();
          if (newName.trim()) setSelected(newName.trim());
          setNewName('');
        }}
      >
        <label for="pp-new">Policy name</label>
        <input id="pp-new" required value={newName} onInput={(e) => setNewName((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">New policy</button>
      </form>
      {selected && <PasswordPolicyEditor key={selected} name={selected} onChanged={() => setTick(tick + 1)} onDeleted={() => (setSelected(null), setTick(tick + 1))} />}
    </section>
  );
}

function PasswordPolicyEditor({ name, onChanged, onDeleted }: { name: string; onChanged: () => void; onDeleted: () => void }) {
  const path = `sys/policies/password/${encodeURIComponent(name)}`;
  const [text, setText] = useState<string | null>(null);
  const [exists, setExists] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sample, setSample] = useState<string | null>(null);
  useEffect(() => {
    api.read<{ policy: string }>(path).then(
      (r) => {
        setText(r.data?.policy ?? '');
        setExists(true);
      },
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 404) setText(EXAMPLE);
        else setError(err);
      },
    );
  }, [name]);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await api.put(path, { policy: text ?? '' });
      setExists(true);
      announce(`Password policy ${name} saved`);
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  const generate = async () => {
    setError(null);
    try {
      const r = await api.read<{ password: string }>(`${path}/generate`);
      setSample(r.data?.password ?? '');
    } catch (err) {
      setError(err);
    }
  };
  if (text === null) return <ErrorMessage error={error} />;
  return (
    <form class="card" onSubmit={save} aria-label={`Password policy ${name}`}>
      <h2>{name}</h2>
      <div class="field">
        <label for="pp-text">Policy</label>
        <textarea id="pp-text" class="code" rows={12} spellcheck={false} aria-invalid={error ? true : undefined} aria-describedby={error ? 'pp-error' : undefined} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
        <ErrorMessage id="pp-error" error={error} />
      </div>
      <div class="actions">
        <button type="submit">Save</button>
        {exists && (
          <button type="button" onClick={generate}>
            Generate a sample
          </button>
        )}
        {exists && (
          <ConfirmButton
            label="Delete"
            onConfirm={async () => {
              try {
                await api.delete(path);
                announce(`Password policy ${name} deleted`);
                onDeleted();
              } catch (err) {
                setError(err);
              }
            }}
          />
        )}
      </div>
      {sample !== null && (
        <p>
          Sample: <MaskedValue label="Sample password" value={sample} />
        </p>
      )}
    </form>
  );
}
