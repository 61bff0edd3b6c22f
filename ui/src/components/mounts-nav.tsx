/** The navigation landmark "Mounts": one link per secrets engine and auth method the caller may see, named by its path. */
import { Link, useLocation } from 'wouter-preact';
import { uiPathOf, useMounts, type MountInfo } from '../api/mounts';
import { ErrorMessage } from './error-message';

function Group({ title, mounts, location }: { title: string; mounts: MountInfo[]; location: string }) {
  return (
    <>
      <h3>{title}</h3>
      <ul>
        {mounts.map((m) => {
          const href = uiPathOf(m);
          return (
            <li key={href}>
              <Link href={href} aria-current={location.startsWith(href) || `${location}/` === href ? 'page' : undefined}>
                {m.path}
              </Link>{' '}
              <span class="type" aria-hidden="true">
                {m.type}
              </span>
            </li>
          );
        })}
      </ul>
    </>
  );
}

export function MountsNav({ namespace }: { namespace: string }) {
  const { mounts, error } = useMounts(namespace);
  const [location] = useLocation();
  return (
    <nav aria-label="Mounts">
      <h2>Mounts</h2>
      <ErrorMessage error={error} />
      {mounts && (
        <>
          <Group title="Secrets engines" mounts={mounts.secret.filter((m) => m.type !== 'system' && m.type !== 'identity')} location={location} />
          <Group title="Auth methods" mounts={mounts.auth} location={location} />
        </>
      )}
    </nav>
  );
}
