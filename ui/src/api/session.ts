/**
 * The signed-in session: the token and the namespace, kept in sessionStorage
 * only (never localStorage, never a URL), so it ends with the tab. Signing
 * out forgets the token and revokes nothing.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Session {
  token: string;
  /** The namespace the token was signed in to ('' for the root namespace). */
  home: string;
  /** The namespace requests go to: `home` or one below it. */
  namespace: string;
}

const KEY = 'strongroom.session';
const listeners = new Set<() => void>();

export function currentSession(): Session | null {
  const raw = sessionStorage.getItem(KEY);
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as Session;
    return typeof s.token === 'string' && s.token ? s : null;
  } catch {
    return null;
  }
}

function save(s: Session | null): void {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
  for (const l of listeners) l();
}

export const startSession = (token: string, namespace: string) => save({ token, home: namespace, namespace });
export const endSession = () => save(null);

export function switchNamespace(namespace: string): void {
  const s = currentSession();
  if (s) save({ ...s, namespace });
}

export function useSession(): Session | null {
  const [session, setSession] = useState(currentSession);
  useEffect(() => {
    const l = () => setSession(currentSession());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return session;
}

/** Namespace paths are written without slashes at either end ("acme/dev"). */
export const normalizeNamespace = (ns: string) => ns.trim().replace(/^\/+|\/+$/g, '');
