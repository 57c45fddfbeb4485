import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef } from "react";

// Only the pieces a stacked bar chart uses, so the bundle carries no other chart type.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/**
 * Ten hues far apart (blue, orange, green, red, purple, brown, pink, grey, olive, cyan: the
 * categorical palette most charting tools share), so no two series of a chart look alike; past
 * ten, hues spread by the golden angle.
 */
const COLORS = [
  "#2563eb",
  "#ea580c",
  "#16a34a",
  "#dc2626",
  "#7c3aed",
  "#92400e",
  "#db2777",
  "#4b5563",
  "#a3a30b",
  "#0891b2",
];

export function seriesColor(i: number): string {
  return COLORS[i] ?? `hsl(${Math.round((i * 137.508) % 360)} 65% 45%)`;
}

export interface StackedBarsProps {
  title: string;
  labels: string[];
  series: { name: string; values: number[] }[];
  format: (n: number) => string;
  /** Counts (requests, tokens): no fractional ticks on the axis. */
  whole?: boolean;
}

/**
 * A stacked bar per day, one colour per series, drawn by Chart.js on a canvas. The canvas's
 * label states the totals, so that a screen reader (and a test) can read what is drawn.
 */
export function StackedBars({ title, labels, series, format, whole = false }: StackedBarsProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<"bar"> | null>(null);
  useEffect(() => {
    if (!canvas.current) return;
    chart.current = new Chart(canvas.current, {
      type: "bar",
      data: { labels: [], datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          x: { stacked: true },
          y: {
            stacked: true,
            beginAtZero: true,
            ticks: { precision: whole ? 0 : undefined, callback: (v) => format(Number(v)) },
          },
        },
        plugins: {
          legend: { position: "bottom" },
          tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${format(Number(c.raw))}` } },
        },
      },
    });
    return () => chart.current?.destroy();
  }, [format, whole]);
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.data.labels = labels.map((d) => d.slice(5));
    c.data.datasets = series.map((s, i) => ({ label: s.name, data: s.values, backgroundColor: seriesColor(i) }));
    c.update();
  }, [labels, series]);
  const summary = series.map((s) => `${s.name} ${format(s.values.reduce((a, b) => a + b, 0))}`).join(", ");
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div className="canvas-box">
        <canvas
          ref={canvas}
          role="img"
          aria-label={`${title}: ${summary || "no traffic"}`}
          data-colors={series.map((_, i) => seriesColor(i)).join(" ")}
        />
      </div>
    </figure>
  );
}
