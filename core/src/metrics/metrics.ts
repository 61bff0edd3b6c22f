/**
 * A small in-process metrics registry rendered in the Prometheus text format
 * at `sys/metrics?format=prometheus`. Counters and gauges keyed by a label set,
 * plus request latency as a summary of fixed buckets. Labels never carry
 * secrets or request paths with ids in them (only mount types and statuses).
 */
type Labels = Record<string, string>;

interface Series {
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: Map<string, number>;
}

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface Metrics {
  inc(name: string, help: string, labels?: Labels, by?: number): void;
  set(name: string, help: string, value: number, labels?: Labels): void;
  observe(name: string, help: string, seconds: number, labels?: Labels): void;
  /** Gauges computed at scrape time. */
  onScrape(fn: () => void): void;
  render(): string;
  snapshot(): Record<string, Record<string, number>>;
}

function labelKey(labels: Labels | undefined): string {
  if (!labels) return '';
  const keys = Object.keys(labels).sort();
  return keys.map((k) => `${k}="${String(labels[k]).replace(/["\\\n]/g, '_')}"`).join(',');
}

export function createMetrics(prefix = 'strongroom'): Metrics {
  const series = new Map<string, Series>();
  const scrapers: Array<() => void> = [];
  const get = (name: string, help: string, type: Series['type']) => {
    const full = `${prefix}_${name}`;
    let s = series.get(full);
    if (!s) series.set(full, (s = { help, type, values: new Map() }));
    return s;
  };
  return {
    inc(name, help, labels, by = 1) {
      const s = get(name, help, 'counter');
      const k = labelKey(labels);
      s.values.set(k, (s.values.get(k) ?? 0) + by);
    },
    set(name, help, value, labels) {
      get(name, help, 'gauge').values.set(labelKey(labels), value);
    },
    observe(name, help, seconds, labels) {
      const s = get(name, help, 'histogram');
      const base = labelKey(labels);
      const sep = base ? ',' : '';
      for (const b of BUCKETS) {
        if (seconds <= b) {
          const k = `${base}${sep}le="${b}"`;
          s.values.set(k, (s.values.get(k) ?? 0) + 1);
        }
      }
      const inf = `${base}${sep}le="+Inf"`;
      s.values.set(inf, (s.values.get(inf) ?? 0) + 1);
      s.values.set(`sum|${base}`, (s.values.get(`sum|${base}`) ?? 0) + seconds);
      s.values.set(`count|${base}`, (s.values.get(`count|${base}`) ?? 0) + 1);
    },
    onScrape(fn) {
      scrapers.push(fn);
    },
    render() {
      for (const fn of scrapers) fn();
      const out: string[] = [];
      for (const [name, s] of series) {
        out.push(`# HELP ${name} ${s.help}`, `# TYPE ${name} ${s.type}`);
        for (const [k, v] of s.values) {
          if (k.startsWith('sum|')) out.push(`${name}_sum${wrapLabels(k.slice(4))} ${v}`);
          else if (k.startsWith('count|')) out.push(`${name}_count${wrapLabels(k.slice(6))} ${v}`);
          else out.push(`${s.type === 'histogram' ? `${name}_bucket` : name}${wrapLabels(k)} ${v}`);
        }
      }
      return `${out.join('\n')}\n`;
    },
    snapshot() {
      for (const fn of scrapers) fn();
      const out: Record<string, Record<string, number>> = {};
      for (const [name, s] of series) out[name] = Object.fromEntries(s.values);
      return out;
    },
  };
}

const wrapLabels = (k: string) => (k ? `{${k}}` : '');
