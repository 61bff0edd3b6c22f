import { createMetrics } from './metrics';

describe('metrics', () => {
  it('renders the series in the Prometheus text format, histogram buckets ascending, gauges set at scrape', async () => {
    const m = createMetrics({ disableHostname: true, processMetrics: false });
    m.requests.inc({ operation: 'read', mount: 'secret/', status: '200' });
    m.requests.inc({ operation: 'read', mount: 'secret/', status: '200' });
    m.requestDuration.observe({ operation: 'read', mount: 'secret/' }, 0.003);
    let n = 0;
    m.onScrape(() => void m.leases.set({ mount: 'db/', namespace: 'root' }, ++n));
    const text = await m.render();
    expect(text).toContain('# TYPE strongroom_requests_total counter');
    expect(text).toContain('strongroom_requests_total{operation="read",mount="secret/",status="200"} 2');
    expect(text).toContain('strongroom_request_duration_seconds_bucket{le="0.005",operation="read",mount="secret/"} 1');
    expect(text).toContain('strongroom_request_duration_seconds_bucket{le="0.001",operation="read",mount="secret/"} 0');
    const les = [...text.matchAll(/strongroom_request_duration_seconds_bucket\{le="([^"]+)"/g)].map((x) => (x[1] === '+Inf' ? Infinity : Number(x[1])));
    expect(les).toEqual([...les].sort((a, b) => a - b));
    expect(text).toContain('strongroom_leases{mount="db/",namespace="root"} 1');
    expect(await m.render()).toContain('strongroom_leases{mount="db/",namespace="root"} 2');
    expect(text).not.toContain('host=');
  });

  it('labels every series with the host unless disable_hostname', async () => {
    const m = createMetrics({ processMetrics: false });
    m.unsealed.set(1);
    expect(await m.render()).toMatch(/strongroom_core_unsealed\{host="[^"]+"\} 1/);
  });
});
