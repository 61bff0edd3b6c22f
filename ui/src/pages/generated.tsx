/**
 * Pages generated from a mount's OpenAPI description: an index of its paths,
 * list views for list paths (paginated with after/limit), read views (secret
 * values masked until revealed) and forms for write paths. No engine is named
 * here: a plugin mounted today gets these pages as it is.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, ApiError, type Envelope } from '../api/client';
import { fillTemplate, loadSpec, matchPath, type MountSpec, type Template } from '../api/openapi';
import { uiPathOf, type MountInfo } from '../api/mounts';
import { useSession } from '../api/session';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';
import { GeneratedForm } from '../components/generated-form';
import { usePagedKeys } from '../components/paged-keys';
import { LeasePanel } from '../components/lease-panel';
import { DataView } from '../components/value-view';

function useSpec(apiPath: string): { spec: MountSpec | null; error: unknown } {
  const session = useSession();
  const [state, setState] = useState<{ spec: MountSpec | null; error: unknown }>({ spec: null, error: null });
  useEffect(() => {
    let live = true;
    loadSpec(apiPath, session?.namespace ?? '').then(
      (spec) => live && setState({ spec, error: null }),
      (error: unknown) => live && setState({ spec: null, error }),
    );
    return () => void (live = false);
  }, [apiPath, session?.namespace]);
  return state;
}

/** The UI address of a path below a mount, each segment encoded. */
export const hrefOf = (mount: MountInfo, sub: string) => `${uiPathOf(mount)}${sub.split('/').map(encodeURIComponent).join('/')}`;

export function Breadcrumbs({ mount, sub }: { mount: MountInfo; sub: string }) {
  const parts = sub.split('/').filter(Boolean);
  return (
    <nav aria-label="Breadcrumb" class="crumbs">
      <ol>
        <li>
          <Link href={hrefOf(mount, '')}>{mount.path}</Link>
        </li>
        {parts.map((p, i) => {
          const dir = i < parts.length - 1 || sub.endsWith('/');
          const to = parts.slice(0, i + 1).join('/') + (dir ? '/' : '');
          return (
            <li key={to}>
              {i === parts.length - 1 ? (
                <span aria-current="page">{p}</span>
              ) : (
                <Link href={hrefOf(mount, to)}>{p}</Link>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

export function GeneratedMount({ mount, apiPath, sub }: { mount: MountInfo; apiPath: string; sub: string }) {
  const { spec, error } = useSpec(apiPath);
  if (error) return <ErrorMessage error={error} />;
  if (!spec) return <p aria-busy="true">Loading…</p>;
  if (sub === '') return <MountIndex mount={mount} spec={spec} />;
  return <PathView mount={mount} apiPath={apiPath} spec={spec} sub={sub} />;
}

function ops(t: Template): string {
  return [t.list && 'list', t.read && 'read', t.write && 'write', t.patch && 'patch', t.delete && 'delete'].filter(Boolean).join(', ');
}

/** One path template: a link when it has no parameter, else a small form asking for them. */
function TemplateEntry({ mount, t }: { mount: MountInfo; t: Template }) {
  const [, navigate] = useLocation();
  const [values, setValues] = useState<Record<string, string>>({});
  const summary = t.list?.summary || t.read?.summary || t.write?.summary || t.delete?.summary || '';
  return (
    <li class="template">
      {t.params.length === 0 ? (
        <Link href={hrefOf(mount, t.template)}>
          <code>{t.template}</code>
        </Link>
      ) : (
        <form
          class="inline"
          aria-label={t.template}
          onSubmit={(e) => {
            e.preventDefault();
            navigate(hrefOf(mount, fillTemplate(t.template, values)));
          }}
        >
          <code>{t.template}</code>
          {t.params.map((p) => (
            <label key={p.name}>
              <span>{p.name}</span>
              <input aria-label={p.name} required value={values[p.name] ?? ''} onInput={(e) => setValues({ ...values, [p.name]: (e.currentTarget as HTMLInputElement).value })} />
            </label>
          ))}
          <button type="submit">Open</button>
        </form>
      )}
      <p class="hint">
        {t.description || summary} <span class="ops">({ops(t)})</span>
      </p>
    </li>
  );
}

function MountIndex({ mount, spec }: { mount: MountInfo; spec: MountSpec }) {
  const lists = spec.templates.filter((t) => t.list);
  const others = spec.templates.filter((t) => !t.list);
  return (
    <section>
      <h1>{mount.path}</h1>
      <p>
        {mount.type} {mount.table === 'auth' ? 'auth method' : 'secrets engine'}
        {mount.description ? `: ${mount.description}` : ''}
      </p>
      {lists.length > 0 && (
        <>
          <h2>Lists</h2>
          <ul class="templates">
            {lists.map((t) => (
              <TemplateEntry key={t.template} mount={mount} t={t} />
            ))}
          </ul>
        </>
      )}
      <h2>Paths</h2>
      <ul class="templates">
        {others.map((t) => (
          <TemplateEntry key={t.template} mount={mount} t={t} />
        ))}
      </ul>
    </section>
  );
}

function PathView({ mount, apiPath, spec, sub }: { mount: MountInfo; apiPath: string; spec: MountSpec; sub: string }) {
  const isDir = sub.endsWith('/');
  const match = matchPath(spec, sub, isDir ? 'dir' : 'item');
  return (
    <section>
      <Breadcrumbs mount={mount} sub={sub} />
      <h1>
        {mount.path}
        {sub}
      </h1>
      {!match ? (
        <ErrorMessage error={`No path of ${mount.path} matches "${sub}".`} />
      ) : isDir ? (
        <ListView key={sub} mount={mount} apiPath={apiPath} spec={spec} sub={sub} template={match.template} />
      ) : (
        <ItemView key={sub} mount={mount} apiPath={apiPath} spec={spec} sub={sub} template={match.template} />
      )}
    </section>
  );
}

function ListView({ mount, apiPath, spec, sub, template }: { mount: MountInfo; apiPath: string; spec: MountSpec; sub: string; template: Template }) {
  const [, navigate] = useLocation();
  const { keys, error, pager } = usePagedKeys(`${apiPath}${sub}`);
  const [newName, setNewName] = useState('');
  // A child path with a write operation: the list can create its entries.
  const creatable = useMemo(() => {
    const m = matchPath(spec, `${sub}new-entry`, 'item');
    return m?.template.write ? m.template : null;
  }, [spec, sub]);
  return (
    <>
      <p class="hint">{template.list?.summary || template.description}</p>
      <ErrorMessage error={error} />
      {keys && keys.length === 0 && <p>No entries.</p>}
      {keys && keys.length > 0 && (
        <ul class="keys" aria-label={`Entries of ${mount.path}${sub}`}>
          {keys.map((k) => (
            <li key={k}>
              <Link href={hrefOf(mount, `${sub}${k}`)}>{k}</Link>
            </li>
          ))}
        </ul>
      )}
      {pager}
      {creatable && (
        <form
          class="inline"
          aria-label="Create an entry"
          onSubmit={(e) => {
            e.preventDefault();
            if (newName.trim()) navigate(hrefOf(mount, `${sub}${newName.trim()}`));
          }}
        >
          <label>
            <span>New entry</span>
            <input aria-label="New entry" required value={newName} onInput={(e) => setNewName((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <button type="submit">Create</button>
        </form>
      )}
    </>
  );
}

/** Paths whose read hands out something new (a credential) are read on request, not on opening the page. */
const readsOnRequest = (t: Template) => !t.write && !t.delete;

function ItemView({ mount, apiPath, spec, sub, template }: { mount: MountInfo; apiPath: string; spec: MountSpec; sub: string; template: Template }) {
  const [, navigate] = useLocation();
  const path = `${apiPath}${sub}`;
  const [read, setRead] = useState<{ data: Record<string, unknown> | null; envelope: Envelope | null; error: unknown; done: boolean }>({ data: null, envelope: null, error: null, done: false });
  const [written, setWritten] = useState<Envelope | null>(null);
  const [deleteError, setDeleteError] = useState<unknown>(null);
  const [formKey, setFormKey] = useState(0);

  const doRead = async () => {
    try {
      const r = await api.read(path);
      setRead({ data: (r.data as Record<string, unknown> | undefined) ?? null, envelope: r, error: null, done: true });
    } catch (error) {
      // A missing entry that can be written is simply new.
      const missing = error instanceof ApiError && error.status === 404 && template.write;
      setRead({ data: null, envelope: null, error: missing ? null : error, done: true });
    }
  };
  useEffect(() => {
    if (template.read && !readsOnRequest(template)) void doRead();
    else setRead({ data: null, envelope: null, error: null, done: true });
  }, [path]);

  const isCreds = /(^|\/)(creds|static-creds|static-cred)\//.test(template.template);
  const parentDir = sub.includes('/') ? sub.slice(0, sub.lastIndexOf('/') + 1) : '';
  return (
    <>
      <p class="hint">{template.description}</p>
      {template.read && readsOnRequest(template) && (
        <div class="actions">
          <button type="button" onClick={doRead}>
            {isCreds ? 'Get credentials' : 'Read'}
          </button>
          <span class="hint">{template.read.summary}</span>
        </div>
      )}
      <ErrorMessage error={read.error} />
      {read.envelope && (
        <section aria-label="Current values">
          {template.write && <h2>Current values</h2>}
          <DataView data={read.data ?? {}} sensitive={spec.sensitive} />
          {read.envelope.lease_id ? <LeasePanel key={read.envelope.lease_id} leaseId={read.envelope.lease_id} duration={read.envelope.lease_duration ?? 0} renewable={read.envelope.renewable === true} /> : null}
        </section>
      )}
      {template.write && read.done && (
        <section aria-label="Write">
          <h2>{read.data ? 'Edit' : 'Write'}</h2>
          <p class="hint">{template.write.summary}</p>
          <GeneratedForm
            key={formKey}
            fields={template.write.fields}
            current={read.data ?? undefined}
            submitLabel="Save"
            onSubmit={async (body) => {
              const r = await api.write(path, body);
              setWritten(r === '' || r === null ? null : (r as Envelope));
              announce('Saved');
              if (template.read && !readsOnRequest(template)) {
                await doRead();
                setFormKey(formKey + 1);
              }
            }}
          />
        </section>
      )}
      {written && (written.data || written.lease_id || written.auth) && (
        <section aria-label="Response">
          <h2>Response</h2>
          <DataView data={(written.data as Record<string, unknown>) ?? (written.auth as unknown as Record<string, unknown>) ?? {}} sensitive={spec.sensitive} />
          {written.lease_id ? <LeasePanel key={written.lease_id} leaseId={written.lease_id} duration={written.lease_duration ?? 0} renewable={written.renewable === true} /> : null}
        </section>
      )}
      {template.delete && (read.data || !template.read) && (
        <div class="actions">
          <ConfirmButton
            label="Delete"
            onConfirm={async () => {
              setDeleteError(null);
              try {
                await api.delete(path);
                announce(`Deleted ${sub}`);
                navigate(hrefOf(mount, parentDir));
              } catch (err) {
                setDeleteError(err);
              }
            }}
          />
        </div>
      )}
      <ErrorMessage error={deleteError} />
    </>
  );
}
