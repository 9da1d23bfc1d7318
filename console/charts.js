import { html, useEffect, useRef } from './vendor/preact.js';

/**
 * A Chart.js chart (its UMD build, loaded by index.html as `window.Chart`): `funnel` is a
 * horizontal bar per stage, `line` a series over days. The numbers are also in a table beside
 * each chart, for readers who do not see it.
 */
export function Chart({ kind, labels, values, label }) {
  const canvas = useRef(null);
  useEffect(() => {
    const ChartJs = window.Chart;
    if (!ChartJs || !canvas.current) return undefined;
    const chart = new ChartJs(canvas.current, {
      type: kind === 'funnel' ? 'bar' : 'line',
      data: { labels, datasets: [{ label, data: values, backgroundColor: '#1d56c4', borderColor: '#1d56c4' }] },
      options: {
        indexAxis: kind === 'funnel' ? 'y' : 'x',
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { display: false } },
        scales: { [kind === 'funnel' ? 'x' : 'y']: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    });
    return () => chart.destroy();
  }, [kind, labels.join('|'), values.join('|')]);
  return html`<div class=${`chart chart-${kind}`}><canvas ref=${canvas} role="img" aria-label=${label}></canvas></div>`;
}
