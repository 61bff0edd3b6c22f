/** Namespaces below the current one: list, create, delete. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import { useSession } from '../api/session';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';

export function NamespacesPage() {
  const session = useSession();
  const [items, setItems] = useState<Array<{ path: string; id: string }> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const [name, setName] = useState('');
  useEffect(() => {
    api.list('sys/namespaces').then((r) => setItems(r.keys.map((k) => ({ path: k, id: String(r.keyInfo[k]?.id ?? '') }))), setError);
  }, [tick, session?.namespace]);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const n = name.trim().replace(/^\/+|\/+$/g, '');
    try {
      await api.write(`sys/namespaces/${n}`, {});
      announce(`Namespace ${n} created`);
      setName('');
      setTick(tick + 1);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section>
      <h1>Namespaces{session?.namespace ? ` in ${session.namespace}` : ''}</h1>
      <ErrorMessage error={error} />
      {items && items.length === 0 && <p>No namespace below this one.</p>}
      {items && items.length > 0 && (
        <table>
          <caption>Namespaces</caption>
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">ID</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((n) => (
              <tr key={n.path}>
                <th scope="row">{n.path}</th>
                <td>
                  <code>{n.id}</code>
                </td>
                <td>
                  <ConfirmButton
                    label="Delete"
                    name={`Delete ${n.path}`}
                    onConfirm={async () => {
                      try {
                        await api.delete(`sys/namespaces/${n.path}`);
                        announce(`Namespace ${n.path} is being deleted`);
                        setTick(tick + 1);
                      } catch (err) {
                        setError(err);
                      }
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="inline" aria-label="Create a namespace" onSubmit={create}>
        <label for="ns-name">Namespace name</label>
        <input id="ns-name" required value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">Create namespace</button>
      </form>
    </section>
  );
}
