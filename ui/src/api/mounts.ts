/** The caller's mounts (sys/internal/ui/mounts, already filtered by its ACL), shared by the navigation and the pages. */
import { useEffect, useState } from 'preact/hooks';
import { api } from './client';

export interface MountInfo {
  /** "secret/" or "approle/" (auth mounts without their "auth/" prefix). */
  path: string;
  table: 'secret' | 'auth';
  type: string;
  description: string;
  options: Record<string, string> | null;
  accessor: string;
  config: Record<string, unknown>;
  plugin_version?: string;
  running_plugin_version?: string;
}

export interface Mounts {
  secret: MountInfo[];
  auth: MountInfo[];
}

let version = 0;
const listeners = new Set<() => void>();

/** Makes every useMounts() reload (after enabling, tuning or disabling a mount). */
export function reloadMounts(): void {
  version++;
  for (const l of listeners) l();
}

function parse(table: 'secret' | 'auth', raw: unknown): MountInfo[] {
  return Object.entries((raw ?? {}) as Record<string, Record<string, unknown>>)
    .map(([path, m]) => ({ ...(m as object), path, table, type: String(m.type ?? ''), description: String(m.description ?? ''), options: (m.options as Record<string, string> | null) ?? null, accessor: String(m.accessor ?? ''), config: (m.config as Record<string, unknown>) ?? {} }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

export function useMounts(namespace: string): { mounts: Mounts | null; error: unknown } {
  const [state, setState] = useState<{ mounts: Mounts | null; error: unknown }>({ mounts: null, error: null });
  const [v, setV] = useState(version);
  useEffect(() => {
    const l = () => setV(version);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  useEffect(() => {
    let live = true;
    api.read<{ secret: unknown; auth: unknown }>('sys/internal/ui/mounts').then(
      (r) => live && setState({ mounts: { secret: parse('secret', r.data?.secret), auth: parse('auth', r.data?.auth) }, error: null }),
      (error: unknown) => live && setState({ mounts: null, error }),
    );
    return () => void (live = false);
  }, [namespace, v]);
  return state;
}

/** The mount serving `rest` (a path below the table), by the longest prefix. */
export function mountFor(list: MountInfo[], rest: string): MountInfo | null {
  const p = rest.endsWith('/') ? rest : `${rest}/`;
  return list.filter((m) => p.startsWith(m.path)).sort((a, b) => b.path.length - a.path.length)[0] ?? null;
}

/** The API path of a mount: "secret/" or "auth/approle/". */
export const apiPathOf = (m: MountInfo) => (m.table === 'auth' ? `auth/${m.path}` : m.path);
/** The UI path of a mount: "/secrets/secret/" or "/auth/approle/". */
export const uiPathOf = (m: MountInfo) => (m.table === 'auth' ? `/auth/${m.path}` : `/secrets/${m.path}`);
