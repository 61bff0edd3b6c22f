/**
 * A label-less Prometheus summary over a sliding window, as go-metrics' timers
 * (Vault's) are, cheap to observe: it is fed on every request and every barrier
 * operation. prom-client's Summary pushes each value into one t-digest per age
 * bucket (five here), a few µs per value on the core's event loop; this one
 * stores the value in the current bucket (a bounded uniform sample past
 * `sampleSize`) and sorts the window only when scraped.
 *
 * The window is `maxAgeSeconds`, cut into `ageBuckets` slices; the quantiles
 * are over the slices not yet aged out (between maxAge minus one slice and
 * maxAge of data). `_count` and `_sum` count every value since start, as in
 * prom-client and client_golang.
 */
import { Summary, type SummaryConfiguration } from 'prom-client';

interface Slice {
  started: number;
  values: Float64Array;
  length: number;
  seen: number;
}

const DEFAULT_SAMPLE = 1024;

export class WindowSummary extends Summary {
  private readonly sliceMs: number;
  private readonly slices: Slice[];
  private readonly sampleSize: number;
  private readonly meta: { name: string; help: string; percentiles: number[] };
  private current: Slice;
  private count = 0;
  private sum = 0;

  constructor(config: SummaryConfiguration<string> & { maxAgeSeconds: number; ageBuckets: number; sampleSize?: number }) {
    if (config.labelNames?.length) throw new Error('WindowSummary takes no labels');
    super(config);
    this.meta = { name: config.name, help: config.help, percentiles: config.percentiles ?? [0.5, 0.9, 0.99] };
    this.sliceMs = (config.maxAgeSeconds * 1000) / config.ageBuckets;
    this.sampleSize = config.sampleSize ?? DEFAULT_SAMPLE;
    this.slices = Array.from({ length: config.ageBuckets }, () => ({ started: 0, values: new Float64Array(this.sampleSize), length: 0, seen: 0 }));
    this.current = this.slices[0] as Slice;
  }

  override observe(labelsOrValue: number | Partial<Record<string, string | number>>, value?: number): void {
    const v = typeof labelsOrValue === 'number' ? labelsOrValue : (value as number);
    this.count++;
    this.sum += v;
    const now = Date.now();
    let s = this.current;
    if (now - s.started >= this.sliceMs) s = this.rotate(now);
    s.seen++;
    if (s.length < this.sampleSize) s.values[s.length++] = v;
    else {
      // Reservoir sampling: every value of the slice is kept with the same probability.
      const i = Math.floor(Math.random() * s.seen);
      if (i < this.sampleSize) s.values[i] = v;
    }
  }

  /** The oldest slice becomes the current one, emptied. */
  private rotate(now: number): Slice {
    let oldest = this.slices[0] as Slice;
    for (const s of this.slices) if (s.started < oldest.started) oldest = s;
    oldest.started = now;
    oldest.length = 0;
    oldest.seen = 0;
    this.current = oldest;
    return oldest;
  }

  override async get(): ReturnType<Summary['get']> {
    const since = Date.now() - this.sliceMs * this.slices.length;
    const live = this.slices.filter((s) => s.started > since && s.length > 0);
    // Each slice's sample stands for all the values it saw.
    const points: { v: number; w: number }[] = [];
    let total = 0;
    for (const s of live) {
      const w = s.seen / s.length;
      for (let i = 0; i < s.length; i++) points.push({ v: s.values[i] as number, w });
      total += s.seen;
    }
    points.sort((a, b) => a.v - b.v);
    const quantile = (q: number): number => {
      if (points.length === 0) return 0;
      const rank = q * total;
      let acc = 0;
      for (const p of points) {
        acc += p.w;
        if (acc >= rank) return p.v;
      }
      return (points[points.length - 1] as { v: number }).v;
    };
    const { name, help, percentiles } = this.meta;
    // The shape prom-client's own Summary answers (its declared type also names a `collect` it never returns).
    const out = {
      name,
      help,
      type: 'summary',
      aggregator: 'sum',
      values: [
        ...percentiles.map((q) => ({ labels: { quantile: q }, value: quantile(q) })),
        { metricName: `${name}_sum`, labels: {}, value: this.sum },
        { metricName: `${name}_count`, labels: {}, value: this.count },
      ],
    };
    return out as unknown as Awaited<ReturnType<Summary['get']>>;
  }

  override reset(): void {
    // prom-client's constructor calls reset() before this class's fields exist.
    if (this.slices === undefined) return;
    this.count = 0;
    this.sum = 0;
    for (const s of this.slices) {
      s.started = 0;
      s.length = 0;
      s.seen = 0;
    }
  }
}
