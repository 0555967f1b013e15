import { type KeyboardEvent, type MouseEvent, useLayoutEffect, useRef, useState } from 'react';
import { labelStep, niceTicks } from '../chart-scale.ts';

/** One line, or one layer of the stacked bars. */
export interface ChartSeries {
  key: string;
  label: string;
  color: string;
  /** One value per bucket, in the order of `labels`. */
  values: number[];
}

export interface TimeChartProps {
  /** `line`: one line per series; `stacked`: one bar per bucket with the series stacked. */
  kind: 'line' | 'stacked';
  /** The x-axis label of each bucket. */
  labels: string[];
  /** The heading of each bucket's tooltip; the label when absent. */
  titles?: string[];
  series: ChartSeries[];
  /** A value in the tooltip. */
  format: (value: number) => string;
  /** A value on the y axis (shorter); `format` when absent. */
  axisFormat?: (value: number) => string;
  /** The accessible name of the chart. */
  title: string;
  /** The tooltip line with the bucket total (stacked only). */
  totalLabel?: string;
  height?: number;
}

const MARGIN = { top: 12, right: 12, bottom: 28 };
/** Roughly how wide one x label is drawn, in px. */
const X_LABEL_ROOM = 84;

/** The width of the element, following resizes; `fallback` where nothing can be measured (tests). */
function useElementWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    const measure = () => {
      if (element.clientWidth > 0) setWidth(element.clientWidth);
    };
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

/**
 * A time chart drawn in SVG: y axis with round ticks and grid lines, thinned x labels, a tooltip per bucket on
 * hover (or with the arrow keys once the chart has focus), and a legend.
 */
export function TimeChart({
  kind,
  labels,
  titles,
  series,
  format,
  axisFormat = format,
  title,
  totalLabel,
  height = 240,
}: TimeChartProps) {
  const [ref, width] = useElementWidth(640);
  const [active, setActive] = useState<number | null>(null);
  const n = labels.length;

  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const peak = kind === 'stacked' ? Math.max(0, ...totals) : Math.max(0, ...series.flatMap((s) => s.values));
  const ticks = niceTicks(peak);
  const top = ticks[ticks.length - 1] ?? 1;
  const tickTexts = ticks.map(axisFormat);
  const left = Math.max(36, Math.max(...tickTexts.map((text) => text.length)) * 7 + 12);
  const innerWidth = Math.max(1, width - left - MARGIN.right);
  const innerHeight = Math.max(1, height - MARGIN.top - MARGIN.bottom);
  const band = innerWidth / Math.max(1, n);
  const xOf = (i: number) => left + band * (i + 0.5);
  const yOf = (value: number) => MARGIN.top + innerHeight - (value / top) * innerHeight;
  const step = labelStep(n, innerWidth / X_LABEL_ROOM);

  const onKeyDown = (event: KeyboardEvent) => {
    if (n === 0) return;
    if (event.key === 'ArrowRight') setActive((i) => (i === null ? 0 : Math.min(n - 1, i + 1)));
    else if (event.key === 'ArrowLeft') setActive((i) => (i === null ? n - 1 : Math.max(0, i - 1)));
    else if (event.key === 'Escape') setActive(null);
    else return;
    event.preventDefault();
  };

  const tooltipRows =
    active === null
      ? []
      : series
          .map((s) => ({ key: s.key, label: s.label, color: s.color, value: s.values[active] ?? 0 }))
          .filter((row) => kind === 'line' || row.value > 0)
          .sort((a, b) => (kind === 'stacked' ? b.value - a.value : 0));
  const activeX = active === null ? 0 : xOf(active);
  const activeTitle = active === null ? '' : (titles?.[active] ?? labels[active] ?? '');
  const valueText =
    active === null
      ? title
      : `${activeTitle}: ${tooltipRows.map((row) => `${row.label} ${format(row.value)}`).join(', ')}`;

  /** Hover: each bucket has a transparent hit area tagged with its index. */
  const onPointer = (event: MouseEvent) => {
    const bucket = (event.target as Element).getAttribute?.('data-bucket');
    if (bucket !== null && bucket !== undefined) setActive(Number(bucket));
  };

  return (
    <div ref={ref} className="relative w-full min-w-0">
      {/* The chart is a slider over its buckets: the arrow keys move the tooltip, a screen reader reads it. */}
      <div
        role="slider"
        tabIndex={0}
        aria-label={title}
        aria-valuemin={0}
        aria-valuemax={Math.max(0, n - 1)}
        aria-valuenow={active ?? 0}
        aria-valuetext={valueText}
        className="rounded outline-none focus-visible:ring-2 focus-visible:ring-blue-500/40"
        onKeyDown={onKeyDown}
        onBlur={() => setActive(null)}
        onMouseMove={onPointer}
        onMouseLeave={() => setActive(null)}
      >
        <svg
          width="100%"
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          aria-hidden="true"
          className="block text-gray-500 dark:text-gray-400"
        >
          {ticks.map((tick, i) => (
            <g key={tick}>
              <line
                x1={left}
                x2={left + innerWidth}
                y1={yOf(tick)}
                y2={yOf(tick)}
                stroke="currentColor"
                strokeOpacity={i === 0 ? 0.5 : 0.15}
              />
              <text
                x={left - 6}
                y={yOf(tick)}
                textAnchor="end"
                dominantBaseline="middle"
                fontSize={11}
                fill="currentColor"
              >
                {tickTexts[i]}
              </text>
            </g>
          ))}
          {labels.map((label, i) =>
            i % step === 0 ? (
              <text
                // biome-ignore lint/suspicious/noArrayIndexKey: buckets are positional
                key={i}
                x={xOf(i)}
                y={height - 8}
                textAnchor="middle"
                fontSize={11}
                fill="currentColor"
              >
                {label}
              </text>
            ) : null,
          )}

          {kind === 'stacked'
            ? labels.map((_, i) => {
                let base = 0;
                const barWidth = Math.max(1, band * 0.7);
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: buckets are positional
                  <g key={i} opacity={active === null || active === i ? 1 : 0.6}>
                    {series.map((s) => {
                      const value = s.values[i] ?? 0;
                      if (value <= 0) return null;
                      const y0 = yOf(base);
                      base += value;
                      const y1 = yOf(base);
                      return (
                        <rect
                          key={s.key}
                          x={xOf(i) - barWidth / 2}
                          y={y1}
                          width={barWidth}
                          height={Math.max(0.5, y0 - y1)}
                          fill={s.color}
                        />
                      );
                    })}
                  </g>
                );
              })
            : series.map((s) => {
                const points = s.values.map((v, i) => `${xOf(i).toFixed(1)},${yOf(v).toFixed(1)}`);
                const baseline = yOf(0).toFixed(1);
                return (
                  <g key={s.key}>
                    {series.length === 1 && n > 1 ? (
                      <path
                        d={`M${xOf(0).toFixed(1)},${baseline} L${points.join(' L')} L${xOf(n - 1).toFixed(1)},${baseline} Z`}
                        fill={s.color}
                        fillOpacity={0.12}
                      />
                    ) : null}
                    <path d={`M${points.join(' L')}`} fill="none" stroke={s.color} strokeWidth={2} />
                    {n <= 60 || active !== null
                      ? s.values.map((v, i) =>
                          n <= 60 || i === active ? (
                            <circle
                              // biome-ignore lint/suspicious/noArrayIndexKey: buckets are positional
                              key={i}
                              cx={xOf(i)}
                              cy={yOf(v)}
                              r={i === active ? 4 : 2.5}
                              fill={s.color}
                            />
                          ) : null,
                        )
                      : null}
                  </g>
                );
              })}

          {active !== null ? (
            <line
              x1={activeX}
              x2={activeX}
              y1={MARGIN.top}
              y2={MARGIN.top + innerHeight}
              stroke="currentColor"
              strokeOpacity={0.4}
              strokeDasharray="3 3"
              pointerEvents="none"
            />
          ) : null}
          {labels.map((_, i) => (
            <rect
              // biome-ignore lint/suspicious/noArrayIndexKey: buckets are positional
              key={i}
              data-bucket={i}
              x={left + band * i}
              y={MARGIN.top}
              width={band}
              height={innerHeight}
              fill="transparent"
            />
          ))}
        </svg>
      </div>

      {active !== null ? (
        <div
          role="tooltip"
          className="pointer-events-none absolute top-2 z-10 min-w-40 max-w-64 rounded-md border border-gray-200 bg-white/95 px-3 py-2 text-xs shadow-lg dark:border-gray-700 dark:bg-gray-900/95"
          style={activeX > width / 2 ? { right: width - activeX + 12 } : { left: activeX + 12 }}
        >
          <p className="mb-1 font-medium">{activeTitle}</p>
          <ul className="space-y-0.5">
            {tooltipRows.map((row) => (
              <li key={row.key} className="flex items-center gap-2">
                <span
                  aria-hidden="true"
                  className="inline-block h-2 w-2 shrink-0 rounded-sm"
                  style={{ backgroundColor: row.color }}
                />
                <span className="min-w-0 flex-1 truncate">{row.label}</span>
                <span className="tabular-nums">{format(row.value)}</span>
              </li>
            ))}
          </ul>
          {kind === 'stacked' && totalLabel ? (
            <p className="mt-1 flex justify-between gap-2 border-t border-gray-200 pt-1 font-medium dark:border-gray-700">
              <span>{totalLabel}</span>
              <span className="tabular-nums">{format(totals[active] ?? 0)}</span>
            </p>
          ) : null}
        </div>
      ) : null}

      {series.length > 1 ? (
        <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-gray-600 dark:text-gray-300">
          {series.map((s) => (
            <li key={s.key} className="flex min-w-0 items-center gap-1.5">
              <span
                aria-hidden="true"
                className="inline-block h-2.5 w-2.5 shrink-0 rounded-sm"
                style={{ backgroundColor: s.color }}
              />
              <span className="break-all">{s.label}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
