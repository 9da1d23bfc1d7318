import { api } from './api.js';
import { t } from './i18n.js';
import { PipelinePicker, usePipelines } from './pipelines.js';
import { html, useEffect, useState } from './vendor/preact.js';

const PAGE = 25;

/**
 * Leads or customers: search, a status filter, keyset "load more", a record's details and history.
 * Leads filter by pipeline too, and their status among its stages (SPEC §20).
 */
export function Records({ resource }) {
  const [query, setQuery] = useState({ q: '', status: '', pipeline: '' });
  const [form, setForm] = useState(query);
  const [items, setItems] = useState([]);
  const [cursor, setCursor] = useState(undefined);
  const [selected, setSelected] = useState(undefined);
  const [error, setError] = useState('');

  const load = async (after) => {
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (query.q.trim().length >= 3) params.set('q', query.q.trim());
    if (query.status.trim()) params.set('status', query.status.trim());
    if (query.pipeline) params.set('pipeline', query.pipeline);
    if (after) params.set('cursor', after);
    setError('');
    try {
      const { body, headers } = await api(`/${resource}?${params}`);
      setItems((known) => (after ? [...known, ...body] : body));
      setCursor(headers.get('x-next-cursor') ?? undefined);
    } catch (failure) {
      setError(failure.message);
    }
  };
  useEffect(() => {
    setSelected(undefined);
    load(undefined);
  }, [resource, query]);

  return html`
    <h1>${t(resource)}</h1>
    <form class="filters" role="search" onSubmit=${(event) => {
      event.preventDefault();
      setQuery(form);
    }}>
      <label>${t('search')} <input name="q" type="search" value=${form.q} onInput=${(event) => setForm({ ...form, q: event.currentTarget.value })} /></label>
      ${
        resource === 'leads'
          ? html`<${StageFilter} form=${form} onChange=${setForm} />`
          : html`<label>${t('status')} <input name="status" value=${form.status} placeholder=${t('anyStatus')} onInput=${(event) => setForm({ ...form, status: event.currentTarget.value })} /></label>`
      }
      <button type="submit">${t('apply')}</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <ul class="records">
      ${items.map(
        (item) => html`
        <li data-id=${item._id}>
          <button type="button" class="record" onClick=${() => setSelected(item._id)}>
            <span class="name">${item.name}</span> <span class="meta">${item.email ?? ''} · ${item.status}</span>
          </button>
        </li>`,
      )}
    </ul>
    ${items.length === 0 && !error && html`<p>${t('nothing')}</p>`}
    ${cursor && html`<button type="button" onClick=${() => load(cursor)}>${t('loadMore')}</button>`}
    ${selected && html`<${Details} resource=${resource} id=${selected} onClose=${() => setSelected(undefined)} />`}`;
}

/**
 * A pipeline select (all of them, or one) and a select of its stages; for all pipelines, every
 * stage key of any of them, once.
 */
function StageFilter({ form, onChange }) {
  const { pipelines } = usePipelines();
  if (!pipelines) return null;
  const chosen = pipelines.find((pipeline) => pipeline.id === form.pipeline);
  const stages = [];
  for (const pipeline of chosen ? [chosen] : pipelines) {
    for (const stage of pipeline.stages) if (!stages.some((known) => known.key === stage.key)) stages.push(stage);
  }
  return html`
    <${PipelinePicker} pipelines=${pipelines} value=${form.pipeline} anyLabel=${t('allPipelines')}
      onChoose=${(pipeline) => onChange({ ...form, pipeline, status: '' })} />
    <label>${t('status')}
      <select name="status" value=${form.status} onChange=${(event) => onChange({ ...form, status: event.currentTarget.value })}>
        <option value="">${t('anyStatus')}</option>
        ${stages.map((stage) => html`<option key=${stage.key} value=${stage.key}>${stage.label}</option>`)}
      </select>
    </label>`;
}

function Details({ resource, id, onClose }) {
  const [record, setRecord] = useState(undefined);
  const [events, setEvents] = useState([]);
  useEffect(() => {
    api(`/${resource}/${id}`).then(({ body }) => setRecord(body));
    api(`/events?objectId=${id}&limit=100`)
      .then(({ body }) => setEvents(body))
      .catch(() => setEvents([]));
  }, [resource, id]);
  if (!record) return html`<p>${t('loading')}</p>`;
  return html`
    <section class="details" aria-labelledby="details-title">
      <h2 id="details-title">${t('details')}: ${record.name}</h2>
      <button type="button" onClick=${onClose}>${t('close')}</button>
      <dl>
        ${Object.entries(record).map(
          ([key, value]) =>
            html`<dt>${key}</dt><dd>${value === null ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value)}</dd>`,
        )}
      </dl>
      <h3>${t('history')}</h3>
      <ol class="history">
        ${events.map(
          (event) =>
            html`<li><time datetime=${event.occurredAt}>${event.occurredAt.replace('T', ' ').slice(0, 19)}</time> ${event.type}
              ${event.data.changedFields.length > 0 ? ` — ${event.data.changedFields.join(', ')}` : ''}</li>`,
        )}
      </ol>
    </section>`;
}
