/** Seal status; unseal with key shares entered one at a time; seal (with a token that may). */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api/client';
import { useSession } from '../api/session';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';

interface SealStatus {
  type: string;
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  version: string;
  cluster_name?: string;
}

export function SealPage() {
  const session = useSession();
  const [status, setStatus] = useState<SealStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [share, setShare] = useState('');
  const [tick, setTick] = useState(0);
  useEffect(() => {
    api.anonymous.read<SealStatus>('sys/seal-status').then(setStatus, setError);
  }, [tick]);

  const unseal = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const s = await api.anonymous.write<SealStatus>('sys/unseal', { key: share.trim() });
      setShare('');
      setStatus(s);
      announce(s.sealed ? `Key share accepted: ${s.progress} of ${s.t}` : 'Unsealed');
    } catch (err) {
      setError(err);
    }
  };
  const reset = async () => {
    setError(null);
    try {
      setStatus(await api.anonymous.write<SealStatus>('sys/unseal', { reset: true }));
      announce('Unseal progress reset');
    } catch (err) {
      setError(err);
    }
  };
  const seal = async () => {
    setError(null);
    try {
      await api.put('sys/seal');
      announce('Sealed');
      setTick(tick + 1);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>Seal</h1>
      <ErrorMessage error={error} />
      {status && (
        <>
          <dl class="data">
            <div>
              <dt>State</dt>
              <dd>
                <strong>{!status.initialized ? 'not initialized' : status.sealed ? 'sealed' : 'unsealed'}</strong>
              </dd>
            </div>
            <div>
              <dt>Key shares</dt>
              <dd>
                {status.t} of {status.n} needed to unseal
              </dd>
            </div>
            <div>
              <dt>Version</dt>
              <dd>{status.version}</dd>
            </div>
          </dl>
          {status.sealed && status.initialized && (
            <form onSubmit={unseal} class="card">
              <h2>Unseal</h2>
              <p role="status">
                {status.progress} of {status.t} key shares entered
              </p>
              <div class="field">
                <label for="key-share">Key share</label>
                <input id="key-share" type="password" autoComplete="off" required value={share} aria-describedby="key-share-hint" onInput={(e) => setShare((e.currentTarget as HTMLInputElement).value)} />
                <small id="key-share-hint" class="hint">
                  One unseal key share at a time (base64 or hex); the server keeps the progress.
                </small>
              </div>
              <div class="actions">
                <button type="submit">Unseal</button>
                {status.progress > 0 && (
                  <button type="button" onClick={reset}>
                    Reset progress
                  </button>
                )}
              </div>
            </form>
          )}
          {!status.sealed && session && (
            <div class="actions">
              <ConfirmButton label="Seal" onConfirm={seal} />
            </div>
          )}
          {!status.sealed && !session && (
            <p>
              <Link href="/sign-in">Sign in</Link>
            </p>
          )}
        </>
      )}
    </section>
  );
}
