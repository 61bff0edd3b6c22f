import { createMetrics } from './metrics';

describe('metrics', () => {
  it('renders counters, gauges and histograms in Prometheus text format', () => {
    const m = createMetrics();
    m.inc('http_requests_total', 'HTTP requests', { status: '200' });
    m.inc('http_requests_total', 'HTTP requests', { status: '200' });
    m.set('leases', 'Active leases', 7);
    m.observe('request_seconds', 'Latency', 0.003, { op: 'read' });
    const text = m.render();
    expect(text).toContain('# TYPE strongroom_http_requests_total counter');
    expect(text).toContain('strongroom_http_requests_total{status="200"} 2');
    expect(text).toContain('strongroom_leases 7');
    expect(text).toContain('strongroom_request_seconds_bucket{op="read",le="0.005"} 1');
    expect(text).not.toContain('le="0.001"} 1');
    expect(text).toContain('strongroom_request_seconds_count{op="read"} 1');
  });
});
