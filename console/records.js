import { api } from './api.js';
import { t } from './i18n.js';
import { html, useEffect, useState } from './vendor/preact.js';

const PAGE = 25;

/** Leads or customers: search, a status filter, keyset "load more", a record's details and history. */
export function Records({ resource }) {
  const [query, setQuery] = useState({ q: '', status: '' });
  const [form, setForm] = useState(query);
  const [items, setItems] = useState([]);
  const [cursor, setCursor] = useState(undefined);
  const [selected, setSelected] = useState(undefined);
  const [error, setError] = useState('');

  const load = async (after) => {
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (query.q.trim().length >= 3) params.set('q', query.q.trim());
    if (query.status.trim()) params.set('status', query.status.trim());
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
      <label>${t('status')} <input name="status" value=${form.status} placeholder=${t('anyStatus')} onInput=${(event) => setForm({ ...form, status: event.currentTarget.value })} /></label>
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
