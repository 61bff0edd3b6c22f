/** A mount's pages: hand-written ones for kv v2 and transit, generated ones from its OpenAPI for everything else. */
import { apiPathOf, mountFor, useMounts } from '../api/mounts';
import { useSession } from '../api/session';
import { ErrorMessage } from '../components/error-message';
import { GeneratedMount } from './generated';
import { KvPage } from './kv';
import { TransitPage } from './transit';

export function MountPage({ table, rest }: { table: 'secret' | 'auth'; rest: string }) {
  const session = useSession();
  const { mounts, error } = useMounts(session?.namespace ?? '');
  if (error) return <ErrorMessage error={error} />;
  if (!mounts) return <p aria-busy="true">Loading…</p>;
  const decoded = rest.split('/').map(decodeURIComponent).join('/');
  const mount = mountFor(table === 'auth' ? mounts.auth : mounts.secret, decoded);
  if (!mount) return <ErrorMessage error={`No mount serves "${decoded}".`} />;
  const sub = decoded.slice(Math.min(mount.path.length, decoded.length));
  const key = `${session?.namespace}|${mount.path}`;
  if (mount.type === 'kv' && mount.options?.version === '2') return <KvPage key={key} mount={mount} sub={sub} />;
  if (mount.type === 'transit') return <TransitPage key={key} mount={mount} sub={sub} />;
  return <GeneratedMount key={`${key}`} mount={mount} apiPath={apiPathOf(mount)} sub={sub} />;
}
