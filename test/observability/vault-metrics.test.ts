/**
 * Vault's dashboards against a config-file server with
 * `telemetry { metrics_prefix = "vault" }`: a Prometheus scrape shows every
 * series under the `vault_` prefix (none under `strongroom_`), and the series
 * Vault's dashboards and alerts read exist under Vault's names, types and
 * units. A listener with `telemetry { unauthenticated_metrics_access = true }`
 * serves sys/metrics without a token; the other listener still refuses it.
 */
import { parsePrometheus, type Exposition } from '../helpers/prometheus';
import { startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let s: RunningServer & { port2: number };

beforeAll(async () => {
  s = await startConfigServer(`
storage "level" { path = "$DIR/data" }
listener "tcp" {
  address = "127.0.0.1:$PORT"
  tls_disable = true
}
listener "tcp" {
  address = "127.0.0.1:$PORT2"
  tls_disable = true
  telemetry {
    unauthenticated_metrics_access = true
  }
}
telemetry {
  metrics_prefix = "vault"
  disable_hostname = true
}
`);
  const init = await s.api('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  expect(init.status).toBe(200);
  expect((await s.api('PUT', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).status).toBe(200);
  s.rootToken = init.body.root_token;
  expect((await s.api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
});
afterAll(async () => {
  await s.stop();
});

async function scrape(port: number, token: string | null): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${port}/v1/sys/metrics?format=prometheus`, { headers: token ? { 'X-Vault-Token': token } : {} });
  return { status: r.status, text: await r.text() };
}

describe('telemetry { metrics_prefix = "vault" }', () => {
  let m: Exposition;

  beforeAll(async () => {
    expect((await s.api('POST', 'secret/data/dash', { data: { v: '1' } })).status).toBe(200);
    expect((await s.api('GET', 'secret/data/dash')).status).toBe(200);
    expect((await s.api('POST', 'auth/token/create', { policies: ['default'], ttl: '1h' })).status).toBe(200);
    const r = await scrape(s.port, s.rootToken);
    expect(r.status).toBe(200);
    m = parsePrometheus(r.text);
  });

  it('renames every series', () => {
    expect(m.samples.length).toBeGreaterThan(50);
    expect(m.samples.filter((x) => !x.name.startsWith('vault_')).map((x) => x.name)).toEqual([]);
    expect(m.types.get('vault_requests_total')).toBe('counter');
  });

  it("has the series Vault's dashboards use, with Vault's names, types and units", () => {
    const expected: Record<string, string> = {
      vault_core_handle_request: 'summary',
      vault_expire_num_leases: 'gauge',
      vault_expire_num_irrevocable_leases: 'gauge',
      vault_token_count: 'gauge',
      vault_core_unsealed: 'gauge',
      vault_core_active: 'gauge',
      vault_runtime_alloc_bytes: 'gauge',
      vault_runtime_sys_bytes: 'gauge',
      vault_runtime_num_goroutines: 'gauge',
      vault_audit_log_request_failure: 'counter',
      vault_audit_log_response_failure: 'counter',
      vault_barrier_get: 'summary',
      vault_barrier_put: 'summary',
      vault_barrier_list: 'summary',
      vault_barrier_delete: 'summary',
    };
    for (const [name, type] of Object.entries(expected)) expect([name, m.types.get(name)]).toEqual([name, type]);
    // A summary in milliseconds with go-metrics' quantiles, as Vault's timers are.
    expect(m.find('vault_core_handle_request').map((x) => x.labels.quantile).sort()).toEqual(['0.5', '0.9', '0.99']);
    expect(m.sum('vault_core_handle_request_count')).toBeGreaterThanOrEqual(3);
    expect(m.sum('vault_barrier_put_count')).toBeGreaterThan(0);
    expect(m.sum('vault_barrier_get_count')).toBeGreaterThan(0);
    expect(m.sum('vault_core_unsealed')).toBe(1);
    expect(m.sum('vault_token_count', { namespace: 'root' })).toBeGreaterThanOrEqual(2);
    expect(m.sum('vault_runtime_alloc_bytes')).toBeGreaterThan(1e6);
    expect(m.sum('vault_runtime_num_goroutines')).toBeGreaterThan(0);
    expect(m.sum('vault_audit_log_request_failure')).toBe(0);
  });
});

describe('listener telemetry { unauthenticated_metrics_access }', () => {
  it('serves sys/metrics without a token on that listener only', async () => {
    const open = await scrape(s.port2, null);
    expect(open.status).toBe(200);
    expect(parsePrometheus(open.text).types.get('vault_core_unsealed')).toBe('gauge');
    // JSON too, as Vault's listener option covers the endpoint, not a format.
    const json = await fetch(`http://127.0.0.1:${s.port2}/v1/sys/metrics`);
    expect(json.status).toBe(200);
    expect((await scrape(s.port, null)).status).toBe(403);
  });

  it('opens nothing else on that listener, and still checks a token that is sent', async () => {
    expect((await fetch(`http://127.0.0.1:${s.port2}/v1/secret/data/dash`)).status).toBe(403);
    expect((await fetch(`http://127.0.0.1:${s.port2}/v1/sys/mounts`)).status).toBe(403);
    expect((await scrape(s.port2, 'not-a-real-token')).status).toBe(403);
    expect((await scrape(s.port2, s.rootToken)).status).toBe(200);
  });
});
