import { api } from './api.js';
import { t } from './i18n.js';
import { html, useEffect, useState } from './vendor/preact.js';
import { WebhookFilter } from './webhook-filter.js';

/**
 * Webhook subscriptions, their filters (SPEC §22) and their delivery log (SPEC §15): each
 * delivery's latest attempt, and, for a token that may write, a retry by hand, a test event and
 * a change of the filter.
 */
export function Webhooks({ who }) {
  const [hooks, setHooks] = useState(undefined);
  const [selected, setSelected] = useState(undefined);
  useEffect(() => {
    api('/webhooks').then(({ body }) => setHooks(body));
  }, []);
  if (!hooks) return html`<p>${t('loading')}</p>`;
  const canWrite = who.scopes.includes('webhooks:write');
  const hook = hooks.find((candidate) => candidate.id === selected);
  const saved = (changed) => setHooks((known) => known.map((one) => (one.id === changed.id ? changed : one)));
  return html`
    <h1>${t('webhooks')}</h1>
    ${hooks.length === 0 && html`<p>${t('nothing')}</p>`}
    <ul class="records">
      ${hooks.map(
        (hook) => html`
        <li data-id=${hook.id}>
          <button type="button" class="record" aria-pressed=${selected === hook.id} onClick=${() => setSelected(hook.id)}>
            <span class="name">${hook.url}</span>
            <span class="meta">${hook.events.join(', ')}${hook.filter ? ` · ${t('filtered')}` : ''} · ${hook.active ? t('active') : t('paused')}${hook.disabledReason ? ` · ${hook.disabledReason}` : ''}</span>
          </button>
        </li>`,
      )}
    </ul>
    ${hook && html`<${WebhookFilter} key=${hook.id} hook=${hook} canWrite=${canWrite} onSaved=${saved} />`}
    ${hook && html`<${Deliveries} id=${hook.id} canWrite=${canWrite} />`}`;
}

function Deliveries({ id, canWrite }) {
  const [status, setStatus] = useState('');
  const [deliveries, setDeliveries] = useState([]);
  const [next, setNext] = useState(undefined);
  const [notice, setNotice] = useState('');

  const load = async (before) => {
    const params = new URLSearchParams({ limit: '25' });
    if (status) params.set('status', status);
    if (before) params.set('before', before);
    const { body, headers } = await api(`/webhooks/${id}/deliveries?${params}`);
    setDeliveries((known) => (before ? [...known, ...body] : body));
    setNext(headers.get('x-next-cursor') ?? undefined);
  };
  useEffect(() => {
    load(undefined);
  }, [id, status]);

  const act = async (path) => {
    setNotice('');
    try {
      await api(path, { method: 'POST' });
      setNotice(t('queued'));
      await load(undefined);
    } catch (failure) {
      setNotice(failure.message);
    }
  };

  return html`
    <section class="details" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">${t('deliveries')}</h2>
      <div class="filters">
        <label>${t('status')}
          <select value=${status} onChange=${(event) => setStatus(event.currentTarget.value)}>
            <option value="">${t('anyStatus')}</option>
            ${['pending', 'succeeded', 'failed'].map((option) => html`<option value=${option}>${option}</option>`)}
          </select>
        </label>
        ${canWrite && html`<button type="button" onClick=${() => act(`/webhooks/${id}/test`)}>${t('sendTest')}</button>`}
      </div>
      <p class="notice" role="status" aria-live="polite">${notice}</p>
      <div class="scroll" tabindex="0">
        <table class="deliveries">
          <thead><tr>
            <th scope="col">${t('event')}</th><th scope="col">${t('status')}</th><th scope="col">${t('tries')}</th>
            <th scope="col">${t('answer')}</th><th scope="col">${t('when')}</th>${canWrite && html`<th scope="col"><span class="visually-hidden">${t('retry')}</span></th>`}
          </tr></thead>
          <tbody>
            ${deliveries.map(
              (delivery) => html`
              <tr data-id=${delivery.id} data-status=${delivery.status}>
                <td>${delivery.eventType}</td>
                <td>${delivery.status}</td>
                <td>${delivery.tries}</td>
                <td>${delivery.httpStatus ?? delivery.error ?? '—'}</td>
                <td>${delivery.lastAttemptAt ? delivery.lastAttemptAt.replace('T', ' ').slice(0, 19) : '—'}</td>
                ${
                  canWrite &&
                  html`<td>${
                    delivery.status !== 'pending' &&
                    html`<button type="button" onClick=${() => act(`/webhooks/${id}/deliveries/${delivery.id}/retry`)}>${t('retry')}</button>`
                  }</td>`
                }
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${next && html`<button type="button" onClick=${() => load(next)}>${t('loadMore')}</button>`}
    </section>`;
}
