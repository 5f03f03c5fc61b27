/** A small Prometheus text-format registry: counters, gauges and histograms with labels. */
type Labels = Record<string, string>;

const NEEDS_ESCAPE = /[\\"\n]/;

/**
 * `a="1",b="2"`: names sorted, values escaped as the text format requires (rarely needed: checked
 * first). Called on every request, so labels already given in name order (every caller here)
 * are not copied and sorted.
 */
function labelKey(labels: Labels): string {
  let key = '';
  let previous = '';
  for (const name in labels) {
    if (name < previous) return sortedLabelKey(labels);
    previous = name;
    key += `${key ? ',' : ''}${name}="${escapeLabel(String(labels[name]))}"`;
  }
  return key;
}

function sortedLabelKey(labels: Labels): string {
  return Object.keys(labels).sort().map((name) => `${name}="${escapeLabel(String(labels[name]))}"`).join(',');
}

function escapeLabel(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [key, value] of this.values) lines.push(`${this.name}${key ? `{${key}}` : ''} ${value}`);
    return lines.join('\n');
  }
}

/** Values read when /metrics is rendered: a gauge, or a counter kept by its owner. */
export class Collected implements Metric {
  constructor(readonly name: string, readonly help: string, private readonly collect: () => Array<[Labels, number]>, private readonly type: 'gauge' | 'counter' = 'gauge') {}
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const [labels, value] of this.collect()) {
      const key = labelKey(labels);
      lines.push(`${this.name}${key ? `{${key}}` : ''} ${value}`);
    }
    return lines.join('\n');
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  readonly buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  constructor(readonly name: string, readonly help: string) {}
  observe(labels: Labels, seconds: number): void {
    const key = labelKey(labels);
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i += 1) if (seconds <= this.buckets[i]) entry.counts[i] += 1;
    entry.sum += seconds;
    entry.count += 1;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [key, entry] of this.series) {
      const prefix = key ? `${key},` : '';
      this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket{${prefix}le="${le}"} ${entry.counts[i]}`));
      lines.push(`${this.name}_bucket{${prefix}le="+Inf"} ${entry.count}`);
      lines.push(`${this.name}_sum${key ? `{${key}}` : ''} ${entry.sum}`);
      lines.push(`${this.name}_count${key ? `{${key}}` : ''} ${entry.count}`);
    }
    return lines.join('\n');
  }
}

export class MetricsRegistry {
  private readonly metrics: Metric[] = [];
  counter(name: string, help: string): Counter {
    return this.add(new Counter(name, help));
  }
  histogram(name: string, help: string): Histogram {
    return this.add(new Histogram(name, help));
  }
  gauge(name: string, help: string, collect: () => Array<[Labels, number]>): Collected {
    return this.add(new Collected(name, help, collect));
  }
  /** A counter whose owner keeps the totals (read at render): they only ever grow. */
  collectedCounter(name: string, help: string, collect: () => Array<[Labels, number]>): Collected {
    return this.add(new Collected(name, help, collect, 'counter'));
  }
  render(): string {
    return this.metrics.map((m) => m.render()).join('\n') + '\n';
  }
  private add<T extends Metric>(metric: T): T {
    this.metrics.push(metric);
    return metric;
  }
}
