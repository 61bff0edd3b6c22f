/**
 * sys/metrics read as Prometheus reads it (a strict text-format parser): the
 * series the operator relies on exist and move with what the server does
 * (requests, leases issued, revoked, expired and irrevocable, tokens, plugin
 * processes and restarts, audit device failures, barrier and storage
 * latency, process and event-loop figures). sys/loggers changes levels at run
 * time, and the request log line carries no token.
 */
import { join } from 'node:path';
import { parsePrometheus, type Exposition } from '../helpers/prometheus';
import { startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { waitFor } from '../helpers/processes';
import { scratchDir } from '../helpers/server';

jest.setTimeout(180_000);

let s: LeaseServer;

beforeAll(async () => {
  s = await startLeaseServer({ extraConfig: 'lease_revocation {\n  retry_base = "10ms"\n  max_attempts = 1\n}\ntelemetry {\n  prometheus_retention_time = "1h"\n}' });
});

afterAll(async () => {
  await s.stop();
});

async function scrape(): Promise<Exposition> {
  const r = await fetch(`${s.url}/v1/sys/metrics?format=prometheus`, { headers: { 'X-Service-Token': s.rootToken } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await r.text());
}

describe('sys/metrics', () => {
  it('exposes every series, with its type, in the Prometheus text format', async () => {
    const m = await scrape();
    const expected: Record<string, string> = {
      strongroom_requests_total: 'counter',
      strongroom_request_duration_seconds: 'histogram',
      strongroom_leases: 'gauge',
      strongroom_leases_irrevocable: 'gauge',
      strongroom_lease_expirations_total: 'counter',
      strongroom_lease_revocations_total: 'counter',
      strongroom_lease_irrevocable_total: 'counter',
      strongroom_tokens: 'gauge',
      strongroom_core_unsealed: 'gauge',
      strongroom_core_ha_enabled: 'gauge',
      strongroom_core_active: 'gauge',
      strongroom_plugin_up: 'gauge',
      strongroom_plugin_degraded: 'gauge',
      strongroom_plugin_restarts_total: 'counter',
      strongroom_audit_failures_total: 'counter',
      strongroom_barrier_duration_seconds: 'histogram',
      strongroom_storage_duration_seconds: 'histogram',
      strongroom_process_resident_memory_bytes: 'gauge',
      strongroom_nodejs_heap_size_used_bytes: 'gauge',
      strongroom_nodejs_eventloop_lag_seconds: 'gauge',
    };
    for (const [name, type] of Object.entries(expected)) expect([name, m.types.get(name)]).toEqual([name, type]);
    expect(m.sum('strongroom_core_unsealed')).toBe(1);
    expect(m.sum('strongroom_core_active')).toBe(1);
    expect(m.sum('strongroom_core_ha_enabled')).toBe(0);
    expect(m.sum('strongroom_process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(m.sum('strongroom_nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(m.find('strongroom_nodejs_eventloop_lag_seconds')).toHaveLength(1);
    // Every series carries the host label (telemetry.disable_hostname is not set).
    expect(m.samples.every((x) => typeof x.labels.host === 'string' && x.labels.host !== '')).toBe(true);
    expect(m.sum('strongroom_plugin_up', { plugin: 'lease-test', version: 'v1.0.0' })).toBe(1);
    expect(m.sum('strongroom_plugin_degraded', { plugin: 'lease-test' })).toBe(0);
    expect(m.sum('strongroom_tokens', { type: 'service', namespace: 'root' })).toBeGreaterThanOrEqual(1);
    // Histogram buckets ascend and are cumulative.
    const buckets = m.find('strongroom_request_duration_seconds_bucket', { operation: 'read', mount: 'sys/' });
    const les = buckets.map((b) => (b.labels.le === '+Inf' ? Infinity : Number(b.labels.le)));
    expect(les).toEqual([...les].sort((a, b) => a - b));
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    // The JSON form carries the same series.
    const json = await s.api('GET', 'sys/metrics');
    expect(json.status).toBe(200);
    expect((json.body.data.metrics as Array<{ name: string }>).map((x) => x.name)).toContain('strongroom_requests_total');
  });

  it('request, lease, plugin, audit and storage series move', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await s.api('GET', 'lt/records')).status).toBe(200);
    expect((await s.api('GET', 'lt/nope')).status).toBeGreaterThanOrEqual(400);
    expect((await s.api('POST', 'lt/roles/short', { ttl: '1s', max_ttl: '1h' })).status).toBeLessThan(300);
    expect((await s.api('POST', 'lt/roles/long', { ttl: '1h', max_ttl: '2h' })).status).toBeLessThan(300);
    expect((await s.api('POST', 'lt/roles/stuck', { ttl: '1s', max_ttl: '1h', fail_revokes: 1000 })).status).toBeLessThan(300);
    const long = [];
    for (let i = 0; i < 3; i++) long.push((await s.api('GET', 'lt/creds/long')).body.lease_id as string);
    expect((await s.api('GET', 'lt/creds/short')).status).toBe(200);
    expect((await s.api('GET', 'lt/creds/stuck')).status).toBe(200);
    let m = await scrape();
    expect(m.sum('strongroom_requests_total', { operation: 'read', mount: 'lt/', status: '200' }) - before.sum('strongroom_requests_total', { operation: 'read', mount: 'lt/', status: '200' })).toBeGreaterThanOrEqual(8);
    expect(m.find('strongroom_requests_total', { mount: 'lt/' }).some((x) => Number(x.labels.status) >= 400)).toBe(true);
    expect(m.sum('strongroom_request_duration_seconds_count', { mount: 'lt/' })).toBeGreaterThan(before.sum('strongroom_request_duration_seconds_count', { mount: 'lt/' }));
    expect(m.sum('strongroom_leases', { mount: 'lt/' })).toBeGreaterThanOrEqual(4);
    expect(m.sum('strongroom_barrier_duration_seconds_count', { op: 'put' })).toBeGreaterThan(before.sum('strongroom_barrier_duration_seconds_count', { op: 'put' }));
    expect(m.sum('strongroom_storage_duration_seconds_count')).toBeGreaterThan(before.sum('strongroom_storage_duration_seconds_count'));

    // An asked revocation counts as a revocation, not an expiration.
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: long[0], sync: true })).status).toBe(204);
    m = await scrape();
    expect(m.sum('strongroom_lease_revocations_total', { mount: 'lt/' })).toBeGreaterThanOrEqual(1);
    // The 1 s lease runs out: an expiration; the stuck one fails its only attempt: irrevocable.
    m = await waitFor('an expiration and an irrevocable lease', async () => {
      const x = await scrape();
      return x.sum('strongroom_lease_expirations_total', { mount: 'lt/' }) >= 1 && x.sum('strongroom_lease_irrevocable_total', { mount: 'lt/' }) >= 1 ? x : false;
    });
    expect(m.sum('strongroom_leases_irrevocable')).toBe(1);
    expect(m.sum('strongroom_leases', { mount: 'lt/' })).toBe(3); // two long ones and the irrevocable one

    // A plugin process killed from outside is restarted: the counter moves and the gauge comes back up.
    const pid = (await s.api('GET', 'lt/pid')).body.data.pid as number;
    process.kill(pid, 'SIGKILL');
    m = await waitFor('the plugin restart to be counted', async () => {
      const x = await scrape();
      return x.sum('strongroom_plugin_restarts_total', { plugin: 'lease-test' }) >= 1 ? x : false;
    });
    await waitFor('the plugin to serve again', async () => (await s.api('GET', 'lt/records')).status === 200);
    expect((await scrape()).sum('strongroom_plugin_up', { plugin: 'lease-test' })).toBe(1);

    // An audit device that cannot write (/dev/full: ENOSPC) is counted by its path; the other one keeps the request served.
    const log = join(scratchDir('sr-metrics-audit-'), 'audit.log');
    expect((await s.api('PUT', 'sys/audit/ok', { type: 'file', options: { file_path: log } })).status).toBe(204);
    expect((await s.api('PUT', 'sys/audit/full', { type: 'file', options: { file_path: '/dev/full' } })).status).toBe(204);
    expect((await s.api('GET', 'lt/records')).status).toBe(200);
    m = await scrape();
    expect(m.sum('strongroom_audit_failures_total', { device: 'full/' })).toBeGreaterThanOrEqual(1);
    expect(m.sum('strongroom_audit_failures_total', { device: 'ok/' })).toBe(0);
    await s.api('DELETE', 'sys/audit/full');
    await s.api('DELETE', 'sys/audit/ok');
  });
});

describe('sys/loggers and the request log line', () => {
  it('lists the loggers, changes one or all at run time, and reverts', async () => {
    const r = await s.api('GET', 'sys/loggers');
    expect(r.status).toBe(200);
    expect(r.body.data.base).toBe('warn');
    for (const name of ['expiration', 'plugins', 'audit', 'request', 'seal']) expect(r.body.data[name]).toBe('warn');
    expect((await s.api('POST', 'sys/loggers/request', { level: 'debug' })).status).toBe(204);
    expect((await s.api('GET', 'sys/loggers/request')).body.data).toEqual({ request: 'debug' });
    const mark = s.output().length;
    expect((await s.api('GET', 'auth/token/lookup-self')).status).toBe(200);
    expect((await s.api('GET', `auth/token/lookup/${s.rootToken}`)).status).toBeGreaterThanOrEqual(200);
    await waitFor('the request lines', () => s.output().slice(mark).includes('auth/token/lookup-self'));
    const lines = s
      .output()
      .slice(mark)
      .split('\n')
      .filter((l) => l.includes('"message":"request"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const self = lines.find((l) => l.path === 'auth/token/lookup-self')!;
    expect(self).toMatchObject({ level: 'debug', logger: 'request', method: 'GET', status: 200, namespace: 'root' });
    expect(typeof self.duration_ms).toBe('number');
    expect(lines.some((l) => l.path === 'auth/token/lookup/<redacted>')).toBe(true);
    // Never the token: not in a header dump, not in a path.
    expect(s.output()).not.toContain(s.rootToken);

    expect((await s.api('POST', 'sys/loggers', { level: 'error' })).status).toBe(204);
    expect((await s.api('GET', 'sys/loggers')).body.data).toMatchObject({ base: 'error', request: 'error', expiration: 'error' });
    const quiet = s.output().length;
    await s.api('GET', 'auth/token/lookup-self');
    expect(s.output().slice(quiet)).not.toContain('"message":"request"');
    expect((await s.api('DELETE', 'sys/loggers')).status).toBe(204);
    expect((await s.api('GET', 'sys/loggers')).body.data).toMatchObject({ base: 'warn', request: 'warn' });
    const bad = await s.api('POST', 'sys/loggers', { level: 'loud' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toContain('level');
    expect((await s.api('POST', 'sys/loggers/nosuch', { level: 'info' })).status).toBe(400);
  });
});
