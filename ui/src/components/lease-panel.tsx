/** A lease: its id, a live countdown to its expiry, and renew and revoke buttons. */
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../api/client';
import { announce } from './announcer';
import { ErrorMessage } from './error-message';

function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  return h > 0 ? `${h}h ${String(m).padStart(2, '0')}m ${String(rest).padStart(2, '0')}s` : m > 0 ? `${m}m ${String(rest).padStart(2, '0')}s` : `${rest}s`;
}

export function LeasePanel({ leaseId, duration, renewable, onRevoked }: { leaseId: string; duration: number; renewable: boolean; onRevoked?: () => void }) {
  const [expiresAt, setExpiresAt] = useState(() => Date.now() + duration * 1000);
  const [now, setNow] = useState(Date.now());
  const [revoked, setRevoked] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const left = Math.max(0, (expiresAt - now) / 1000);

  const renew = async () => {
    setError(null);
    try {
      const r = await api.put('sys/leases/renew', { lease_id: leaseId });
      const d = r && typeof r === 'object' ? (r.lease_duration as number | undefined) : undefined;
      if (typeof d === 'number') setExpiresAt(Date.now() + d * 1000);
      announce('Lease renewed');
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const revoke = async () => {
    setError(null);
    try {
      await api.put('sys/leases/revoke', { lease_id: leaseId });
      setRevoked(true);
      announce('Lease revoked');
      onRevoked?.();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section class="lease" aria-label="Lease">
      <h3>Lease</h3>
      <dl class="data">
        <div>
          <dt>Lease ID</dt>
          <dd>
            <code>{leaseId}</code>
          </dd>
        </div>
        <div>
          <dt>Expires in</dt>
          <dd>
            {revoked ? (
              <span>revoked</span>
            ) : (
              <span role="timer" aria-live="off" aria-label="Time left on the lease">
                {duration === 0 ? 'no expiry' : formatDuration(left)}
              </span>
            )}
          </dd>
        </div>
      </dl>
      {!revoked && (
        <div class="actions">
          {renewable && (
            <button type="button" onClick={renew}>
              Renew
            </button>
          )}
          <button type="button" class="danger" onClick={revoke}>
            Revoke
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}
