/** The namespace requests go to: the one signed in to, or one below it. */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api } from '../api/client';
import { switchNamespace, type Session } from '../api/session';

/** Namespaces below `home` (two levels deep), as full paths; none when the caller may not list them. */
async function below(home: string): Promise<string[]> {
  const children = async (ns: string) => {
    try {
      const { keys } = await api.list('sys/namespaces', undefined, ns);
      return keys.map((k) => `${ns ? `${ns}/` : ''}${k.replace(/\/$/, '')}`);
    } catch {
      return [];
    }
  };
  const first = await children(home);
  const second = (await Promise.all(first.map(children))).flat();
  return [...first, ...second].sort();
}

export function NamespaceSelect({ session }: { session: Session }) {
  const [options, setOptions] = useState<string[]>([]);
  const [, navigate] = useLocation();
  useEffect(() => {
    void below(session.home).then(setOptions);
  }, [session.home, session.token]);
  return (
    <label class="ns">
      <span>Namespace</span>
      <select aria-label="Namespace"
        value={session.namespace}
        onChange={(e) => {
          switchNamespace((e.currentTarget as HTMLSelectElement).value);
          navigate('/');
        }}
      >
        <option value={session.home}>{session.home || 'root'}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}
