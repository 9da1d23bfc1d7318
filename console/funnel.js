import { api } from './api.js';
import { Chart } from './charts.js';
import { t } from './i18n.js';
import { PipelinePicker, stageLabel, usePipelines } from './pipelines.js';
import { html, useEffect, useState } from './vendor/preact.js';

const DAY = 86_400_000;

function isoDay(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * The funnel of a pipeline's summary (SPEC §18, §20): its open stages in board order, then its
 * won ones, the ends a lead reaches. Each open stage's leads reached it if they are at it, at a
 * later open stage, or won; a won stage is reached by its own leads. Lost stages, and statuses no
 * stage has now (kind null), are apart: `ends`, counted and not converted.
 */
export function funnelStages(byStatus) {
  const open = byStatus.filter((entry) => entry.kind === 'open');
  const won = byStatus.filter((entry) => entry.kind === 'won');
  const wonCount = won.reduce((sum, entry) => sum + entry.count, 0);
  const reachedOpen = open.map((_, index) => open.slice(index).reduce((sum, later) => sum + later.count, wonCount));
  const lastOpen = reachedOpen.at(-1);
  const stages = [
    ...open.map((entry, index) => ({
      ...entry,
      reached: reachedOpen[index],
      conversion: index === 0 || !reachedOpen[index - 1] ? undefined : reachedOpen[index] / reachedOpen[index - 1],
    })),
    ...won.map((entry) => ({
      ...entry,
      reached: entry.count,
      conversion: lastOpen ? entry.count / lastOpen : undefined,
    })),
  ];
  const apart = byStatus.filter((entry) => entry.kind !== 'open' && entry.kind !== 'won');
  return { stages, apart };
}

export function Funnel() {
  const today = Date.now();
  const { pipelines, chosen, choose, error: pipelinesError } = usePipelines();
  const [filters, setFilters] = useState({ source: '', since: isoDay(today - 29 * DAY), until: isoDay(today) });
  const [form, setForm] = useState(filters);
  const [summary, setSummary] = useState(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    if (!chosen) return;
    const query = new URLSearchParams({
      createdSince: `${filters.since}T00:00:00.000Z`,
      createdUntil: new Date(Date.parse(`${filters.until}T00:00:00.000Z`) + DAY).toISOString(),
      pipeline: chosen.id,
    });
    if (filters.source) query.set('source', filters.source);
    setError('');
    api(`/leads/summary?${query}`)
      .then(({ body }) => setSummary(body))
      .catch((failure) => setError(failure.message));
  }, [filters, chosen?.id]);
  const field = (name) => (event) => setForm({ ...form, [name]: event.currentTarget.value });
  // The summary of the pipeline chosen now, not of the one before while the new one comes.
  const shown = summary && chosen && summary.pipeline === chosen.id ? summary : undefined;
  const { stages, apart } = shown ? funnelStages(shown.byStatus) : { stages: [], apart: [] };
  const label = (status) => stageLabel(chosen, status);
  return html`
    <h1>${t('funnel')}</h1>
    <form class="filters" onSubmit=${(event) => {
      event.preventDefault();
      setFilters(form);
    }}>
      ${chosen && html`<${PipelinePicker} pipelines=${pipelines} value=${chosen.id} onChoose=${choose} />`}
      <label>${t('source')} <input name="source" value=${form.source} placeholder=${t('anySource')} onInput=${field('source')} /></label>
      <label>${t('since')} <input name="since" type="date" required value=${form.since} onInput=${field('since')} /></label>
      <label>${t('until')} <input name="until" type="date" required value=${form.until} onInput=${field('until')} /></label>
      <button type="submit">${t('apply')}</button>
    </form>
    ${(error || pipelinesError) && html`<p class="error" role="alert">${error || pipelinesError}</p>`}
    ${
      shown &&
      html`
      <p class="total">${t('total')}: <strong data-testid="total">${shown.total}</strong></p>
      <section aria-labelledby="funnel-title">
        <h2 id="funnel-title" class="visually-hidden">${t('funnel')}</h2>
        <${Chart} kind="funnel" labels=${stages.map((stage) => label(stage.status))} values=${stages.map((stage) => stage.reached)}
          label=${t('reached')} />
        <div class="scroll" tabindex="0"><table class="stages">
          <caption>${t('reachedHelp')}</caption>
          <thead><tr><th scope="col">${t('stage')}</th><th scope="col">${t('count')}</th><th scope="col">${t('reached')}</th><th scope="col">${t('conversion')}</th></tr></thead>
          <tbody>
            ${stages.map(
              (stage) => html`<tr data-status=${stage.status} data-kind=${stage.kind}>
                <th scope="row">${label(stage.status)}</th><td class="count">${stage.count}</td><td>${stage.reached}</td>
                <td>${stage.conversion === undefined ? '—' : `${Math.round(stage.conversion * 100)} %`}</td></tr>`,
            )}
            ${apart.map(
              (entry) => html`<tr data-status=${entry.status} data-kind=${entry.kind ?? ''}>
                <th scope="row">${label(entry.status)}</th><td class="count">${entry.count}</td><td>—</td><td>—</td></tr>`,
            )}
          </tbody>
        </table></div>
      </section>
      <section aria-labelledby="per-day-title">
        <h2 id="per-day-title">${t('perDay')}</h2>
        <${Chart} kind="line" labels=${shown.perDay.map((day) => day.date)} values=${shown.perDay.map((day) => day.count)}
          label=${t('perDay')} />
      </section>
      <section aria-labelledby="by-source-title">
        <h2 id="by-source-title">${t('bySource')}</h2>
        <div class="scroll" tabindex="0"><table class="sources">
          <thead><tr><th scope="col">${t('source')}</th><th scope="col">${t('count')}</th></tr></thead>
          <tbody>${shown.bySource.map((entry) => html`<tr><td>${entry.source ?? t('noSource')}</td><td>${entry.count}</td></tr>`)}</tbody>
        </table></div>
      </section>`
    }`;
}
