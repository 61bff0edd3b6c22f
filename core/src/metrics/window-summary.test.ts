import { Registry } from 'prom-client';
import { WindowSummary } from './window-summary';

const config = (registry: Registry, sampleSize?: number) => ({
  name: 'x_handle',
  help: 'h',
  percentiles: [0.5, 0.9, 0.99],
  maxAgeSeconds: 10,
  ageBuckets: 5,
  registers: [registry],
  ...(sampleSize ? { sampleSize } : {}),
});

describe('WindowSummary', () => {
  afterEach(() => jest.useRealTimers());

  it('renders quantiles, _sum and _count in the text format, with the registry default labels', async () => {
    const registry = new Registry();
    registry.setDefaultLabels({ host: 'h1' });
    const s = new WindowSummary(config(registry));
    for (let i = 1; i <= 100; i++) s.observe(i);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE x_handle summary');
    expect(text).toContain('x_handle{quantile="0.5",host="h1"} 50');
    expect(text).toContain('x_handle{quantile="0.9",host="h1"} 90');
    expect(text).toContain('x_handle{quantile="0.99",host="h1"} 99');
    expect(text).toContain('x_handle_sum{host="h1"} 5050');
    expect(text).toContain('x_handle_count{host="h1"} 100');
  });

  it('forgets values older than the window for the quantiles, never for _count and _sum', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const registry = new Registry();
    const s = new WindowSummary(config(registry));
    s.observe(1000);
    jest.advanceTimersByTime(4000);
    s.observe(1);
    expect((await s.get()).values.find((v) => v.labels.quantile === 0.99)?.value).toBe(1000);
    jest.advanceTimersByTime(7000);
    s.observe(2);
    const values = (await s.get()).values;
    expect(values.find((v) => v.labels.quantile === 0.99)?.value).toBe(2);
    expect(values.find((v) => v.metricName === 'x_handle_count')?.value).toBe(3);
    jest.advanceTimersByTime(11_000);
    expect((await s.get()).values.find((v) => v.labels.quantile === 0.5)?.value).toBe(0);
  });

  it('keeps a bounded sample that still stands for every value of its slice', async () => {
    const s = new WindowSummary(config(new Registry(), 64));
    for (let i = 0; i < 10_000; i++) s.observe(i % 2 === 0 ? 1 : 100);
    const median = (await s.get()).values.find((v) => v.labels.quantile === 0.5)?.value;
    expect([1, 100]).toContain(median);
    expect((await s.get()).values.find((v) => v.labels.quantile === 0.99)?.value).toBe(100);
  });
});
