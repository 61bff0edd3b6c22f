/** Secrets engines or auth methods: enable (with the type's options), tune, disable (confirmed). */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api/client';
import { forgetSpecs } from '../api/openapi';
import { reloadMounts, uiPathOf, useMounts, type MountInfo } from '../api/mounts';
import { useSession } from '../api/session';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';
import { formatKeyValues, parseKeyValues } from '../components/key-values';

export function MountsAdminPage({ table }: { table: 'secret' | 'auth' }) {
  const session = useSession();
  const { mounts, error } = useMounts(session?.namespace ?? '');
  const base = table === 'auth' ? 'sys/auth' : 'sys/mounts';
  const list = (table === 'auth' ? mounts?.auth : mounts?.secret)?.filter((m) => m.type !== 'system') ?? [];
  const [actionError, setActionError] = useState<unknown>(null);
  const [tuning, setTuning] = useState<string | null>(null);
  const changed = (msg: string) => {
    forgetSpecs();
    reloadMounts();
    announce(msg);
  };
  return (
    <section>
      <h1>{table === 'auth' ? 'Auth methods' : 'Secrets engines'}</h1>
      <ErrorMessage error={error ?? actionError} />
      <table>
        <caption>Enabled</caption>
        <thead>
          <tr>
            <th scope="col">Path</th>
            <th scope="col">Type</th>
            <th scope="col">Plugin version</th>
            <th scope="col">Description</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {list.map((m) => (
            <tr key={m.path}>
              <th scope="row">
                <Link href={uiPathOf(m)}>{m.path}</Link>
              </th>
              <td>
                {m.type}
                {m.options && Object.keys(m.options).length ? ` (${formatKeyValues(m.options)})` : ''}
              </td>
              <td>{m.running_plugin_version ?? ''}</td>
              <td>{m.description}</td>
              <td class="actions">
                <button type="button" class="small" aria-label={`Tune ${m.path}`} aria-expanded={tuning === m.path} onClick={() => setTuning(tuning === m.path ? null : m.path)}>
                  Tune
                </button>
                {!(table === 'auth' && m.type === 'token') && m.type !== 'cubbyhole' && (
                  <ConfirmButton
                    label="Disable"
                    name={`Disable ${m.path}`}
                    onConfirm={async () => {
                      setActionError(null);
                      try {
                        await api.delete(`${base}/${m.path}`);
                        changed(`${m.path} disabled`);
                      } catch (err) {
                        setActionError(err);
                      }
                    }}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {tuning && list.find((m) => m.path === tuning) && <TuneForm key={tuning} base={base} mount={list.find((m) => m.path === tuning)!} onDone={() => (setTuning(null), changed(`${tuning} tuned`))} />}
      <EnableForm table={table} base={base} onDone={(p) => changed(`${p} enabled`)} />
    </section>
  );
}

function TuneForm({ base, mount, onDone }: { base: string; mount: MountInfo; onDone: () => void }) {
  const [values, setValues] = useState({ description: mount.description, default_lease_ttl: '', max_lease_ttl: '' });
  /** The values read back; null until then (the fields wait for them, so nothing typed is overwritten). */
  const [initial, setInitial] = useState<typeof values | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api.read<{ default_lease_ttl: number; max_lease_ttl: number; description?: string }>(`${base}/${mount.path}tune`).then((r) => {
      const read = { description: mount.description, default_lease_ttl: String(r.data?.default_lease_ttl ?? ''), max_lease_ttl: String(r.data?.max_lease_ttl ?? '') };
      setValues(read);
      setInitial(read);
    }, setError);
  }, [mount.path]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    // Only what was changed: the TTLs read back are the effective ones, and sending them would pin them.
    const body = Object.fromEntries(Object.entries(values).filter(([k, v]) => v !== initial?.[k as keyof typeof values]));
    try {
      await api.write(`${base}/${mount.path}tune`, body);
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  const input = (key: keyof typeof values, label: string, hint: string) => (
    <div class="field">
      <label for={`tune-${key}`}>{label}</label>
      <input id={`tune-${key}`} aria-describedby={`tune-${key}-hint`} value={values[key]} onInput={(e) => setValues({ ...values, [key]: (e.currentTarget as HTMLInputElement).value })} />
      <small id={`tune-${key}-hint`} class="hint">
        {hint}
      </small>
    </div>
  );
  return (
    <form class="card" onSubmit={submit} aria-label={`Tune ${mount.path}`}>
      <h2>Tune {mount.path}</h2>
      {initial && (
        <>
          {input('description', 'Description', 'Shown beside the mount.')}
          {input('default_lease_ttl', 'Default lease TTL', 'Seconds or a duration (1h); 0 for the system default.')}
          {input('max_lease_ttl', 'Max lease TTL', 'Seconds or a duration (768h); 0 for the system default.')}
          <div class="actions">
            <button type="submit">Save tuning</button>
          </div>
        </>
      )}
      <ErrorMessage error={error} />
    </form>
  );
}

function EnableForm({ table, base, onDone }: { table: 'secret' | 'auth'; base: string; onDone: (path: string) => void }) {
  /** The catalog's types of this table; null while loading, [] when the catalog cannot be read (then a free field). */
  const [types, setTypes] = useState<string[] | null>(null);
  const [type, setType] = useState('');
  const [path, setPath] = useState('');
  const [description, setDescription] = useState('');
  const [options, setOptions] = useState('');
  const [version, setVersion] = useState('');
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api.read<{ secret?: string[]; auth?: string[] }>('sys/plugins/catalog').then(
      (r) => {
        const names = [...(table === 'auth' ? r.data?.auth ?? [] : r.data?.secret ?? [])].filter((n) => n !== 'system' && n !== 'token' && n !== 'cubbyhole').sort();
        setTypes(names);
        setType((t) => t || names[0] || '');
      },
      () => setTypes([]),
    );
  }, [table]);
  useEffect(() => setOptions(type === 'kv' ? 'version=2' : ''), [type]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const p = (path.trim() || type).replace(/^\/+|\/+$/g, '');
    try {
      await api.write(`${base}/${p}`, { type, description, options: parseKeyValues(options), ...(version.trim() ? { plugin_version: version.trim() } : {}) });
      setPath('');
      setDescription('');
      onDone(`${p}/`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-label={table === 'auth' ? 'Enable an auth method' : 'Enable a secrets engine'}>
      <h2>{table === 'auth' ? 'Enable an auth method' : 'Enable a secrets engine'}</h2>
      <div class="field">
        <label for="enable-type">Type</label>
        {types === null || types.length ? (
          <select id="enable-type" disabled={types === null} value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}>
            {(types ?? []).map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        ) : (
          <input id="enable-type" required value={type} onInput={(e) => setType((e.currentTarget as HTMLInputElement).value)} />
        )}
      </div>
      <div class="field">
        <label for="enable-path">Path</label>
        <input id="enable-path" placeholder={type} aria-describedby="enable-path-hint" value={path} onInput={(e) => setPath((e.currentTarget as HTMLInputElement).value)} />
        <small id="enable-path-hint" class="hint">
          Where to mount it; the type's name when empty.
        </small>
      </div>
      <div class="field">
        <label for="enable-description">Description</label>
        <input id="enable-description" value={description} onInput={(e) => setDescription((e.currentTarget as HTMLInputElement).value)} />
      </div>
      <div class="field">
        <label for="enable-options">Options</label>
        <textarea id="enable-options" rows={2} aria-describedby="enable-options-hint" value={options} onInput={(e) => setOptions((e.currentTarget as HTMLTextAreaElement).value)} />
        <small id="enable-options-hint" class="hint">
          One key=value per line (kv: version=1 or version=2).
        </small>
      </div>
      <div class="field">
        <label for="enable-version">Plugin version</label>
        <input id="enable-version" aria-describedby="enable-version-hint" value={version} onInput={(e) => setVersion((e.currentTarget as HTMLInputElement).value)} />
        <small id="enable-version-hint" class="hint">
          A registered version to pin; the built-in one when empty.
        </small>
      </div>
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="submit">Enable</button>
      </div>
    </form>
  );
}
