import type { Metric, Registry } from "prom-client";
import { LabelCache, type LabelValue } from "./label-cache";

/** One sample as prom-client's registry renders it. */
interface Sample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** What the registry reads of a metric when it is scraped (prom-client's `get()` contract). */
interface Exposed {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: Sample[];
}

const labelsOf = (names: readonly string[], values: readonly string[]) =>
  Object.fromEntries(names.map((n, i) => [n, values[i]!]));

/**
 * Counters and histograms whose request-time work is a cached child and a few additions: the
 * registry (prom-client) renders them at scrape time like its own. prom-client's own classes
 * check and join the label values on every `inc` and `observe` (a few microseconds per request
 * for the ten or so a request makes); here that happens once per label set.
 */
abstract class LightMetric<C extends { labels: Record<string, string> }> {
  protected readonly children: C[] = [];
  private readonly cache: LabelCache<C>;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    this.cache = new LabelCache((values) => {
      const child = this.make(labelsOf(labelNames, values));
      this.children.push(child);
      return child;
    });
    // The registry calls `get()` of whatever it holds; this class keeps that contract.
    registry.registerMetric(this as unknown as Metric);
  }

  protected abstract make(labels: Record<string, string>): C;

  /** The child of one label set (values in `labelNames` order). */
  child(...values: LabelValue[]): C {
    return this.cache.get(...values);
  }

  abstract get(): Exposed;
}

export interface CounterChild {
  labels: Record<string, string>;
  value: number;
}

export class LightCounter extends LightMetric<CounterChild> {
  protected make(labels: Record<string, string>): CounterChild {
    return { labels, value: 0 };
  }

  get(): Exposed {
    return {
      name: this.name,
      help: this.help,
      type: "counter",
      aggregator: "sum",
      values: this.children.map((c) => ({ value: c.value, labels: c.labels })),
    };
  }
}

export interface HistogramChild {
  labels: Record<string, string>;
  sum: number;
  count: number;
  /** Observations per bucket (not cumulative; the last is above every bound). */
  buckets: Float64Array;
}

export class LightHistogram extends LightMetric<HistogramChild> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  protected make(labels: Record<string, string>): HistogramChild {
    return { labels, sum: 0, count: 0, buckets: new Float64Array(this.bounds.length + 1) };
  }

  observe(child: HistogramChild, value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    child.buckets[i]! += 1;
    child.sum += value;
    child.count += 1;
  }

  get(): Exposed {
    const values: Sample[] = [];
    for (const c of this.children) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += c.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, value: cumulative, labels: { ...c.labels, le } });
      });
      values.push({ metricName: `${this.name}_bucket`, value: c.count, labels: { ...c.labels, le: "+Inf" } });
      values.push({ metricName: `${this.name}_sum`, value: c.sum, labels: c.labels });
      values.push({ metricName: `${this.name}_count`, value: c.count, labels: c.labels });
    }
    return { name: this.name, help: this.help, type: "histogram", aggregator: "sum", values };
  }
}
