/** Health, HA leader, and live charts from sys/metrics: requests per second, leases, plugin restarts. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import { ErrorMessage } from '../components/error-message';

const POLL_MS = 5000;
const KEEP = 36;

/** The sum of every series of `name` in a Prometheus text exposition. */
function sumSeries(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) sum += v;
  }
  return sum;
}

interface Sample {
  at: number;
  requests: number;
  leases: number;
  restarts: number;
}

function Chart({ title, unit, points }: { title: string; unit: string; points: number[] }) {
  const max = Math.max(1, ...points);
  const w = 100;
  const h = 40;
  const coords = points.map((p, i) => `${points.length < 2 ? 0 : (i / (points.length - 1)) * w},${h - (p / max) * (h - 2) - 1}`).join(' ');
  const last = points[points.length - 1];
  const label = `${title}: ${last === undefined ? 'no data yet' : `${Math.round(last * 100) / 100} ${unit}`}`;
  return (
    <figure class="chart">
      <figcaption>{label}</figcaption>
      <svg viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={`${label}; highest ${Math.round(max * 100) / 100} over the last ${points.length} samples`}>
        <polyline points={coords} vector-effect="non-scaling-stroke" />
      </svg>
    </figure>
  );
}

export function StatusPage() {
  const [health, setHealth] = useState<Record<string, unknown> | null>(null);
  const [leader, setLeader] = useState<Record<string, unknown> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [metricsError, setMetricsError] = useState<unknown>(null);
  const [samples, setSamples] = useState<Sample[]>([]);

  useEffect(() => {
    api.anonymous.read<Record<string, unknown>>('sys/health?standbyok=true&perfstandbyok=true&sealedcode=200&uninitcode=200').then(setHealth, setError);
    api.anonymous.read<Record<string, unknown>>('sys/leader').then(setLeader, setError);
    let live = true;
    const poll = async () => {
      try {
        const text = await api.text('sys/metrics', { format: 'prometheus' });
        const s: Sample = { at: Date.now(), requests: sumSeries(text, 'strongroom_requests_total'), leases: sumSeries(text, 'strongroom_leases'), restarts: sumSeries(text, 'strongroom_plugin_restarts_total') };
        if (live) {
          setSamples((prev) => [...prev, s].slice(-KEEP));
          setMetricsError(null);
        }
      } catch (err) {
        if (live) setMetricsError(err);
      }
    };
    void poll();
    const t = setInterval(poll, POLL_MS);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, []);

  const rates = samples.slice(1).map((s, i) => (s.requests - samples[i]!.requests) / Math.max(0.001, (s.at - samples[i]!.at) / 1000));
  return (
    <section>
      <h1>Status</h1>
      <ErrorMessage error={error} />
      <div class="charts">
        {health && (
          <dl class="data card" aria-label="Health">
            {(['initialized', 'sealed', 'standby', 'version', 'cluster_name'] as const).map((k) => (
              <div key={k}>
                <dt>{k.replace('_', ' ')}</dt>
                <dd>{String(health[k] ?? '')}</dd>
              </div>
            ))}
          </dl>
        )}
        {leader && (
          <dl class="data card" aria-label="High availability">
            <div>
              <dt>HA enabled</dt>
              <dd>{String(leader.ha_enabled)}</dd>
            </div>
            <div>
              <dt>This node leads</dt>
              <dd>{String(leader.is_self)}</dd>
            </div>
            <div>
              <dt>Leader address</dt>
              <dd>{String(leader.leader_address || '(this node)')}</dd>
            </div>
          </dl>
        )}
      </div>
      <h2>Metrics</h2>
      <ErrorMessage error={metricsError} />
      <div class="charts">
        <Chart title="Requests per second" unit="req/s" points={rates} />
        <Chart title="Leases" unit="leases" points={samples.map((s) => s.leases)} />
        <Chart title="Plugin restarts" unit="restarts" points={samples.map((s) => s.restarts)} />
      </div>
      <p class="hint">Sampled every {POLL_MS / 1000} s while this page is open.</p>
    </section>
  );
}
