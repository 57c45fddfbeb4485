/** One sample of the Prometheus text format: its name, its labels, its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Reads the text exposition format into samples (comments and blank lines skipped; a malformed line throws). */
export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample with this name and exactly these labels; undefined if none. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  return samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}

/** Every sample of a metric name. */
export const samplesOf = (samples: Sample[], name: string) => samples.filter((s) => s.name === name);
