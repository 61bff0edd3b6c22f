/** The landing page: what is mounted, with links. */
import { Link } from 'wouter-preact';
import { uiPathOf, useMounts, type MountInfo } from '../api/mounts';
import { useSession } from '../api/session';
import { ErrorMessage } from '../components/error-message';

function Table({ caption, mounts }: { caption: string; mounts: MountInfo[] }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Path</th>
          <th scope="col">Type</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        {mounts.map((m) => (
          <tr key={m.path}>
            <td>
              <Link href={uiPathOf(m)}>{m.path}</Link>
            </td>
            <td>
              {m.type}
              {m.options?.version ? ` v${m.options.version}` : ''}
            </td>
            <td>{m.description}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function HomePage() {
  const session = useSession();
  const { mounts, error } = useMounts(session?.namespace ?? '');
  return (
    <section>
      <h1>Overview{session?.namespace ? ` of ${session.namespace}` : ''}</h1>
      <ErrorMessage error={error} />
      {mounts && (
        <>
          <Table caption="Secrets engines" mounts={mounts.secret.filter((m) => m.type !== 'system')} />
          <Table caption="Auth methods" mounts={mounts.auth} />
        </>
      )}
    </section>
  );
}
