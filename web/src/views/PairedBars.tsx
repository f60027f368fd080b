// A paired bar chart (barChart.ts draws it) as a React element: made in an
// effect on a ref, updated when its rows change.
import { useEffect, useRef } from 'react';
import { createBarChart, type BarChartSpec } from './barChart';

export function BarChart<R>({ spec, rows, reducedMotion, className, label }: { spec: BarChartSpec<R>; rows: R[]; reducedMotion: boolean; className: string; label: string }) {
  const ref = useRef<SVGSVGElement>(null);
  const chart = useRef<ReturnType<typeof createBarChart<R>> | null>(null);
  useEffect(() => {
    chart.current ??= createBarChart(ref.current!, spec);
    chart.current.update(rows, reducedMotion);
  }, [spec, rows, reducedMotion]);
  return <svg ref={ref} className={className} role="img" aria-label={label} />;
}
