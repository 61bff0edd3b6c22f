/** Leases: look up by prefix, then renew, revoke, or revoke a whole prefix (sudo). */
import { useState } from 'preact/hooks';
import { api } from '../api/client';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';
import { LeasePanel } from '../components/lease-panel';

interface Lookup {
  id: string;
  ttl: number;
  renewable: boolean;
  expire_time: string | null;
  issue_time: string;
}

export function LeasesPage() {
  const [prefix, setPrefix] = useState('');
  const [shown, setShown] = useState<string | null>(null);
  const [keys, setKeys] = useState<string[] | null>(null);
  const [lease, setLease] = useState<Lookup | null>(null);
  const [error, setError] = useState<unknown>(null);

  const look = async (p: string) => {
    setError(null);
    setLease(null);
    const clean = p.trim().replace(/^\/+/, '');
    setShown(clean);
    try {
      if (clean && !clean.endsWith('/')) {
        // A whole lease id: its details.
        const r = await api.put('sys/leases/lookup', { lease_id: clean });
        setKeys(null);
        setLease(((r as { data?: Lookup }).data ?? null) as Lookup | null);
      } else {
        setKeys((await api.list(`sys/leases/lookup/${clean}`)).keys);
      }
    } catch (err) {
      setKeys(null);
      setError(err);
    }
  };

  return (
    <section>
      <h1>Leases</h1>
      <form
        class="inline"
        aria-label="Look up leases"
        onSubmit={(e) => {
          e.preventDefault();
          void look(prefix);
        }}
      >
        <label for="lease-prefix">Prefix or lease ID</label>
        <input id="lease-prefix" size={48} placeholder="database/creds/readonly/" value={prefix} onInput={(e) => setPrefix((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">Look up</button>
      </form>
      <p class="hint">A prefix ends with a slash (database/creds/readonly/) and lists the leases under it; a full lease ID shows that lease.</p>
      <ErrorMessage error={error} />
      {keys && shown !== null && (
        <>
          <h2>Under {shown || '(all mounts)'}</h2>
          {keys.length === 0 ? (
            <p>No leases.</p>
          ) : (
            <ul class="keys" aria-label="Leases">
              {keys.map((k) => (
                <li key={k}>
                  <button
                    type="button"
                    class="link"
                    onClick={() => {
                      setPrefix(`${shown}${k}`);
                      void look(`${shown}${k}`);
                    }}
                  >
                    {k}
                  </button>
                </li>
              ))}
            </ul>
          )}
          {shown && (
            <div class="actions">
              <ConfirmButton
                label="Revoke prefix"
                onConfirm={async () => {
                  setError(null);
                  try {
                    await api.put(`sys/leases/revoke-prefix/${shown}`);
                    announce(`Leases under ${shown} revoked`);
                    void look(shown);
                  } catch (err) {
                    setError(err);
                  }
                }}
              />
            </div>
          )}
        </>
      )}
      {lease && (
        <>
          <dl class="data">
            <div>
              <dt>Issued</dt>
              <dd>{new Date(lease.issue_time).toLocaleString()}</dd>
            </div>
            <div>
              <dt>Expires</dt>
              <dd>{lease.expire_time ? new Date(lease.expire_time).toLocaleString() : 'never'}</dd>
            </div>
          </dl>
          <LeasePanel key={lease.id} leaseId={lease.id} duration={lease.ttl} renewable={lease.renewable} />
        </>
      )}
    </section>
  );
}
