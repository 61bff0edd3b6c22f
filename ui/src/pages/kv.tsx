/**
 * kv version 2, by hand: a generated page would show its data/metadata/delete/
 * undelete/destroy paths as separate forms, where a person thinks of one
 * secret with versions. Lists from metadata/, a secret's latest version with
 * masked values, its version history, soft delete, undelete, destroy, and a
 * diff of two versions.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, ApiError } from '../api/client';
import { type MountInfo } from '../api/mounts';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';
import { MaskedValue } from '../components/masked-value';
import { usePagedKeys } from '../components/paged-keys';
import { Breadcrumbs, hrefOf } from './generated';

interface VersionMeta {
  created_time: string;
  deletion_time: string;
  destroyed: boolean;
}
interface Metadata {
  current_version: number;
  oldest_version: number;
  max_versions: number;
  versions: Record<string, VersionMeta>;
  updated_time: string;
}

const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

export function KvPage({ mount, sub }: { mount: MountInfo; sub: string }) {
  // The list the editor was opened from: moving elsewhere (the saved secret) closes it.
  const [creatingIn, setCreatingIn] = useState<string | null>(null);
  if (creatingIn === sub) return <SecretEditor mount={mount} dir={sub} onCancel={() => setCreatingIn(null)} />;
  if (sub === '' || sub.endsWith('/')) return <KvList mount={mount} dir={sub} onCreate={() => setCreatingIn(sub)} />;
  return <SecretView key={sub} mount={mount} path={sub} />;
}

function KvList({ mount, dir, onCreate }: { mount: MountInfo; dir: string; onCreate: () => void }) {
  const { keys, error, pager } = usePagedKeys(`${mount.path}metadata/${encodePath(dir)}`);
  return (
    <section>
      {dir && <Breadcrumbs mount={mount} sub={dir} />}
      <h1>
        {mount.path}
        {dir}
      </h1>
      <div class="actions">
        <button type="button" onClick={onCreate}>
          Create secret
        </button>
      </div>
      <ErrorMessage error={error} />
      {keys && keys.length === 0 && <p>No secrets here yet.</p>}
      {keys && keys.length > 0 && (
        <ul class="keys" aria-label="Secrets">
          {keys.map((k) => (
            <li key={k}>
              <Link href={hrefOf(mount, `${dir}${k}`)}>{k}</Link>
            </li>
          ))}
        </ul>
      )}
      {pager}
    </section>
  );
}

interface Row {
  id: number;
  key: string;
  value: string;
}
let rowSeq = 0;
const rowsOf = (data: Record<string, unknown>): Row[] => {
  const rows = Object.entries(data).map(([key, v]) => ({ id: ++rowSeq, key, value: typeof v === 'string' ? v : JSON.stringify(v) }));
  return rows.length ? rows : [{ id: ++rowSeq, key: '', value: '' }];
};

/** A new secret (with a "Path" field) or a new version of an existing one. */
function SecretEditor({ mount, dir, path, current, cas, onCancel, onSaved }: { mount: MountInfo; dir?: string; path?: string; current?: Record<string, unknown>; cas?: number; onCancel: () => void; onSaved?: () => void }) {
  const [, navigate] = useLocation();
  const [name, setName] = useState(dir ?? '');
  const [rows, setRows] = useState<Row[]>(() => rowsOf(current ?? {}));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const update = (id: number, patch: Partial<Row>) => setRows(rows.map((r) => (r.id === id ? { ...r, ...patch } : r)));
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const target = (path ?? name).trim().replace(/^\/+/, '');
    if (!target || target.endsWith('/')) return setError('Path: give the secret a name (a path like app/db).');
    const data: Record<string, string> = {};
    for (const r of rows) {
      if (!r.key.trim() && !r.value) continue;
      if (!r.key.trim()) return setError('Key: every value needs a key.');
      data[r.key.trim()] = r.value;
    }
    setBusy(true);
    try {
      await api.write(`${mount.path}data/${encodePath(target)}`, { data, ...(cas !== undefined ? { options: { cas } } : {}) });
      announce(`Saved ${target}`);
      if (onSaved) onSaved();
      else navigate(hrefOf(mount, target));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>{path ? `New version of ${path}` : 'Create secret'}</h1>
      <form onSubmit={save}>
        {!path && (
          <div class="field">
            <label for="kv-path">Path</label>
            <input id="kv-path" required value={name} autoComplete="off" aria-describedby="kv-path-hint" onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
            <small id="kv-path-hint" class="hint">
              Below {mount.path}, e.g. app/db.
            </small>
          </div>
        )}
        <fieldset>
          <legend>Data</legend>
          {rows.map((r, i) => (
            <div class="kv-row" key={r.id} role="group" aria-label={`Entry ${i + 1}`}>
              <label>
                <span>Key</span>
                <input aria-label="Key" value={r.key} autoComplete="off" spellcheck={false} onInput={(e) => update(r.id, { key: (e.currentTarget as HTMLInputElement).value })} />
              </label>
              <label>
                <span>Value</span>
                <input aria-label="Value" value={r.value} autoComplete="off" spellcheck={false} onInput={(e) => update(r.id, { value: (e.currentTarget as HTMLInputElement).value })} />
              </label>
              <button type="button" class="small" aria-label={`Remove entry ${i + 1}`} onClick={() => setRows(rows.length > 1 ? rows.filter((x) => x.id !== r.id) : [{ id: ++rowSeq, key: '', value: '' }])}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setRows([...rows, { id: ++rowSeq, key: '', value: '' }])}>
            Add entry
          </button>
        </fieldset>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Save
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

const alive = (v: VersionMeta | undefined) => !!v && !v.destroyed && !v.deletion_time;

function SecretView({ mount, path }: { mount: MountInfo; path: string }) {
  const [, navigate] = useLocation();
  const [meta, setMeta] = useState<Metadata | null>(null);
  const [version, setVersion] = useState<number | null>(null);
  const [data, setData] = useState<Record<string, unknown> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState(false);
  const [diff, setDiff] = useState(false);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    setError(null);
    api.read<Metadata>(`${mount.path}metadata/${encodePath(path)}`).then(
      (r) => {
        if (!live) return;
        const m = r.data!;
        setMeta(m);
        setVersion((v) => (v !== null && m.versions[String(v)] ? v : m.current_version));
      },
      (err: unknown) => live && setError(err instanceof ApiError && err.status === 404 ? `No secret at ${path}.` : err),
    );
    return () => void (live = false);
  }, [path, tick]);

  useEffect(() => {
    if (!meta || version === null) return;
    let live = true;
    setData(null);
    // A deleted or destroyed version has no data to read: the metadata says so without asking.
    if (!alive(meta.versions[String(version)])) return;
    api.read<{ data: Record<string, unknown> }>(`${mount.path}data/${encodePath(path)}`, { version }).then(
      (r) => live && setData(r.data?.data ?? {}),
      (err: unknown) => live && setError(err),
    );
    return () => void (live = false);
  }, [meta, version]);

  const act = async (what: 'delete' | 'undelete' | 'destroy', versions: number[]) => {
    setError(null);
    try {
      await api.write(`${mount.path}${what}/${encodePath(path)}`, { versions });
      announce(`Version ${versions.join(', ')} ${what === 'delete' ? 'deleted' : what === 'undelete' ? 'restored' : 'destroyed'}`);
      setTick(tick + 1);
    } catch (err) {
      setError(err);
    }
  };

  if (editing && meta) {
    return <SecretEditor mount={mount} path={path} current={data ?? {}} cas={meta.current_version} onCancel={() => setEditing(false)} onSaved={() => (setEditing(false), setVersion(null), setTick(tick + 1))} />;
  }
  const vm = meta && version !== null ? meta.versions[String(version)] : undefined;
  const versions = meta ? Object.keys(meta.versions).map(Number).sort((a, b) => b - a) : [];
  return (
    <section>
      <Breadcrumbs mount={mount} sub={path} />
      <h1>{path}</h1>
      <ErrorMessage error={error} />
      {meta && version !== null && (
        <>
          <div class="toolbar">
            <label>
              <span>Version</span>
              <select aria-label="Version" value={String(version)} onChange={(e) => setVersion(Number((e.currentTarget as HTMLSelectElement).value))}>
                {versions.map((v) => (
                  <option key={v} value={String(v)}>
                    {v}
                    {v === meta.current_version ? ' (current)' : ''}
                    {meta.versions[String(v)]?.destroyed ? ' (destroyed)' : meta.versions[String(v)]?.deletion_time ? ' (deleted)' : ''}
                  </option>
                ))}
              </select>
            </label>
            <button type="button" onClick={() => setEditing(true)}>
              Create new version
            </button>
            <button type="button" aria-pressed={diff} onClick={() => setDiff(!diff)}>
              Compare versions
            </button>
          </div>
          {vm?.destroyed ? (
            <p role="status">Version {version} is destroyed: its data is gone for good.</p>
          ) : vm?.deletion_time ? (
            <p role="status">Version {version} is deleted. Undelete it to read it again.</p>
          ) : data ? (
            <table class="secret">
              <caption>Version {version}</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(data).map(([k, v]) => (
                  <tr key={k}>
                    <th scope="row">{k}</th>
                    <td>
                      <MaskedValue label={k} value={typeof v === 'string' ? v : JSON.stringify(v)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p aria-busy="true">Loading…</p>
          )}
          <div class="actions">
            {alive(vm) && <ConfirmButton label="Delete version" onConfirm={() => act('delete', [version])} />}
            {vm && !vm.destroyed && vm.deletion_time && (
              <button type="button" onClick={() => act('undelete', [version])}>
                Undelete version
              </button>
            )}
            {vm && !vm.destroyed && <ConfirmButton label="Destroy version" onConfirm={() => act('destroy', [version])} />}
            <ConfirmButton
              label="Delete secret"
              onConfirm={async () => {
                try {
                  await api.delete(`${mount.path}metadata/${encodePath(path)}`);
                  announce(`Deleted ${path} and all its versions`);
                  navigate(hrefOf(mount, path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : ''));
                } catch (err) {
                  setError(err);
                }
              }}
            />
          </div>
          {diff && <VersionDiff mount={mount} path={path} meta={meta} />}
          <VersionHistory meta={meta} />
        </>
      )}
    </section>
  );
}

function VersionHistory({ meta }: { meta: Metadata }) {
  const versions = Object.entries(meta.versions).sort((a, b) => Number(b[0]) - Number(a[0]));
  return (
    <table>
      <caption>Versions</caption>
      <thead>
        <tr>
          <th scope="col">Version</th>
          <th scope="col">Created</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        {versions.map(([v, m]) => (
          <tr key={v}>
            <td>{v}</td>
            <td>{new Date(m.created_time).toLocaleString()}</td>
            <td>{m.destroyed ? 'destroyed' : m.deletion_time ? `deleted ${new Date(m.deletion_time).toLocaleString()}` : 'live'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function VersionDiff({ mount, path, meta }: { mount: MountInfo; path: string; meta: Metadata }) {
  const live = Object.keys(meta.versions)
    .map(Number)
    .filter((v) => alive(meta.versions[String(v)]))
    .sort((a, b) => a - b);
  const [from, setFrom] = useState(live.length > 1 ? live[live.length - 2]! : live[0] ?? 0);
  const [to, setTo] = useState(live[live.length - 1] ?? 0);
  const [rows, setRows] = useState<Array<{ key: string; status: string; before?: string; after?: string }> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!from || !to) return;
    let on = true;
    const read = (v: number) => api.read<{ data: Record<string, unknown> }>(`${mount.path}data/${encodePath(path)}`, { version: v }).then((r) => r.data?.data ?? {});
    Promise.all([read(from), read(to)]).then(
      ([a, b]) => {
        if (!on) return;
        const str = (v: unknown) => (v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v));
        const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
        setRows(
          keys.map((key) => {
            const before = str(a[key]);
            const after = str(b[key]);
            const status = before === undefined ? 'added' : after === undefined ? 'removed' : before === after ? 'unchanged' : 'changed';
            return { key, status, ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) };
          }),
        );
      },
      (err: unknown) => on && setError(err),
    );
    return () => void (on = false);
  }, [from, to]);
  const pick = (label: string, value: number, set: (v: number) => void) => (
    <label>
      <span>{label}</span>
      <select aria-label={label} value={String(value)} onChange={(e) => set(Number((e.currentTarget as HTMLSelectElement).value))}>
        {live.map((v) => (
          <option key={v} value={String(v)}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section aria-label="Differences between versions">
      <h2>Compare versions</h2>
      <div class="toolbar">
        {pick('From version', from, setFrom)}
        {pick('To version', to, setTo)}
      </div>
      <ErrorMessage error={error} />
      {rows && (
        <table>
          <caption>
            Version {from} to version {to}
          </caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Change</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key} class={`diff-${r.status}`}>
                <th scope="row">{r.key}</th>
                <td>{r.status}</td>
                <td>{r.before !== undefined && <MaskedValue label={`${r.key} before`} value={r.before} />}</td>
                <td>{r.after !== undefined && <MaskedValue label={`${r.key} after`} value={r.after} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
