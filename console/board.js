import { api } from './api.js';
import { t } from './i18n.js';
import { html, useEffect, useState } from './vendor/preact.js';

const PER_COLUMN = 20;

/**
 * A column per status; dragging a card to another column (or choosing it in the card's "Move
 * to" list, by keyboard) changes the lead's status with If-Match. A lead changed elsewhere since
 * the board read it is not moved: the card is reloaded and says so (SPEC §18).
 */
export function Board() {
  const [statuses, setStatuses] = useState([]);
  const [columns, setColumns] = useState({});
  const [notice, setNotice] = useState('');
  const [dragged, setDragged] = useState(undefined);

  const loadColumn = async (status) => {
    const { body } = await api(`/leads?status=${encodeURIComponent(status)}&limit=${PER_COLUMN}&sort=-updatedAt`);
    setColumns((known) => ({ ...known, [status]: body }));
  };
  useEffect(() => {
    api('/leads/summary').then(async ({ body }) => {
      const names = body.byStatus.map((entry) => entry.status);
      setStatuses(names);
      // One after the other: a tenant's share of the server is a few requests at a time (SPEC §10).
      for (const status of names) await loadColumn(status);
    });
  }, []);

  const replace = (lead) =>
    setColumns((known) => {
      const next = {};
      for (const [status, cards] of Object.entries(known)) next[status] = cards.filter((card) => card._id !== lead._id);
      next[lead.status] = [lead, ...(next[lead.status] ?? [])];
      return next;
    });

  const move = async (lead, status) => {
    if (lead.status === status) return;
    setNotice('');
    const { body: current, headers } = await api(`/leads/${lead._id}`);
    if (current.updatedAt !== lead.updatedAt) {
      replace(current);
      setNotice(t('changedElsewhere'));
      return;
    }
    try {
      const { body: moved } = await api(`/leads/${lead._id}/status`, {
        method: 'PUT',
        body: { status },
        headers: { 'if-match': headers.get('etag') },
      });
      replace(moved);
      setNotice(t('moved'));
    } catch (failure) {
      if (failure.status !== 412) throw failure;
      replace((await api(`/leads/${lead._id}`)).body);
      setNotice(t('changedElsewhere'));
    }
  };

  return html`
    <h1>${t('board')}</h1>
    <p class="notice" role="status" aria-live="polite">${notice}</p>
    <div class="board" tabindex="0" role="region" aria-label=${t('board')}>
      ${statuses.map(
        (status) => html`
        <section class="column" data-status=${status} aria-labelledby=${`column-${status}`}
          onDragOver=${(event) => event.preventDefault()}
          onDrop=${(event) => {
            event.preventDefault();
            if (dragged) move(dragged, status);
          }}>
          <h2 id=${`column-${status}`}>${status}</h2>
          <ul>
            ${(columns[status] ?? []).map(
              (lead) => html`
              <li class="card" draggable="true" data-id=${lead._id} onDragStart=${() => setDragged(lead)}>
                <span class="name">${lead.name}</span>
                <span class="meta">${[lead.email, lead.source, `${t('score')} ${lead.score}`].filter(Boolean).join(' · ')}</span>
                <label>${t('moveTo')}
                  <select value=${lead.status} onChange=${(event) => move(lead, event.currentTarget.value)}>
                    ${statuses.map((option) => html`<option value=${option}>${option}</option>`)}
                  </select>
                </label>
              </li>`,
            )}
          </ul>
        </section>`,
      )}
    </div>`;
}
