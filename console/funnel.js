import { api } from './api.js';
import { Chart } from './charts.js';
import { t } from './i18n.js';
import { html, useEffect, useState } from './vendor/preact.js';

const DAY = 86_400_000;
/** A status that leaves the pipeline from any stage: not a stage of the funnel. */
const LOST = 'lost';

function isoDay(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Each stage's leads, how many reached it (at it or beyond, lost ones apart) and the conversion
 * from the stage before.
 */
export function funnelStages(byStatus) {
  const stages = byStatus.filter((entry) => entry.status !== LOST);
  return stages.map((entry, index) => {
    const reached = stages.slice(index).reduce((sum, later) => sum + later.count, 0);
    const before = index === 0 ? undefined : stages.slice(index - 1).reduce((sum, later) => sum + later.count, 0);
    return { ...entry, reached, conversion: before ? reached / before : undefined };
  });
}

export function Funnel() {
  const today = Date.now();
  const [filters, setFilters] = useState({ source: '', since: isoDay(today - 29 * DAY), until: isoDay(today) });
  const [form, setForm] = useState(filters);
  const [summary, setSummary] = useState(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    const query = new URLSearchParams({
      createdSince: `${filters.since}T00:00:00.000Z`,
      createdUntil: new Date(Date.parse(`${filters.until}T00:00:00.000Z`) + DAY).toISOString(),
    });
    if (filters.source) query.set('source', filters.source);
    setError('');
    api(`/leads/summary?${query}`)
      .then(({ body }) => setSummary(body))
      .catch((failure) => setError(failure.message));
  }, [filters]);
  const field = (name) => (event) => setForm({ ...form, [name]: event.currentTarget.value });
  const stages = summary ? funnelStages(summary.byStatus) : [];
  const lost = summary?.byStatus.find((entry) => entry.status === LOST);
  return html`
    <h1>${t('funnel')}</h1>
    <form class="filters" onSubmit=${(event) => {
      event.preventDefault();
      setFilters(form);
    }}>
      <label>${t('source')} <input name="source" value=${form.source} placeholder=${t('anySource')} onInput=${field('source')} /></label>
      <label>${t('since')} <input name="since" type="date" required value=${form.since} onInput=${field('since')} /></label>
      <label>${t('until')} <input name="until" type="date" required value=${form.until} onInput=${field('until')} /></label>
      <button type="submit">${t('apply')}</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      summary &&
      html`
      <p class="total">${t('total')}: <strong data-testid="total">${summary.total}</strong></p>
      <section aria-labelledby="funnel-title">
        <h2 id="funnel-title" class="visually-hidden">${t('funnel')}</h2>
        <${Chart} kind="funnel" labels=${stages.map((stage) => stage.status)} values=${stages.map((stage) => stage.reached)}
          label=${t('reached')} />
        <div class="scroll" tabindex="0"><table class="stages">
          <caption>${t('reachedHelp')}</caption>
          <thead><tr><th scope="col">${t('stage')}</th><th scope="col">${t('count')}</th><th scope="col">${t('reached')}</th><th scope="col">${t('conversion')}</th></tr></thead>
          <tbody>
            ${stages.map(
              (stage) => html`<tr data-status=${stage.status}>
                <th scope="row">${stage.status}</th><td class="count">${stage.count}</td><td>${stage.reached}</td>
                <td>${stage.conversion === undefined ? '—' : `${Math.round(stage.conversion * 100)} %`}</td></tr>`,
            )}
            ${lost && html`<tr data-status=${LOST}><th scope="row">${LOST}</th><td class="count">${lost.count}</td><td>—</td><td>—</td></tr>`}
          </tbody>
        </table></div>
      </section>
      <section aria-labelledby="per-day-title">
        <h2 id="per-day-title">${t('perDay')}</h2>
        <${Chart} kind="line" labels=${summary.perDay.map((day) => day.date)} values=${summary.perDay.map((day) => day.count)}
          label=${t('perDay')} />
      </section>
      <section aria-labelledby="by-source-title">
        <h2 id="by-source-title">${t('bySource')}</h2>
        <div class="scroll" tabindex="0"><table class="sources">
          <thead><tr><th scope="col">${t('source')}</th><th scope="col">${t('count')}</th></tr></thead>
          <tbody>${summary.bySource.map((entry) => html`<tr><td>${entry.source ?? t('noSource')}</td><td>${entry.count}</td></tr>`)}</tbody>
        </table></div>
      </section>`
    }`;
}
