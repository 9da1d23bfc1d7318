import { api } from './api.js';
import { t } from './i18n.js';
import { html, useEffect, useState } from './vendor/preact.js';

const PER_COLUMN = 20;

/**
 * A column per status; dragging a card to another column (or, by keyboard, choosing the column in
 * the card's list and pressing Move) changes the lead's status with If-Match. A lead changed
 * elsewhere since the board read it is not moved: the card is reloaded and says so (SPEC §18).
 * A token without leads:write sees the board without the means to move.
 */
export function Board({ who }) {
  const canMove = who.scopes.includes('leads:write');
  const [statuses, setStatuses] = useState([]);
  const [columns, setColumns] = useState({});
  const [notice, setNotice] = useState('');
  // The card being dragged, from its dragstart to its drop: a drop with no card dragged moves nothing.
  const [dragged, setDragged] = useState(undefined);

  const loadColumn = async (status) => {
    const { body } = await api(`/leads?status=${encodeURIComponent(status)}&limit=${PER_COLUMN}&sort=-updatedAt`);
    setColumns((known) => ({ ...known, [status]: body }));
  };
  useEffect(() => {
    (async () => {
      const { body } = await api('/leads/summary');
      const names = body.byStatus.map((entry) => entry.status);
      setStatuses(names);
      // One after the other: a tenant's share of the server is a few requests at a time (SPEC §10).
      for (const status of names) await loadColumn(status);
    })().catch((failure) => setNotice(failure.message));
  }, []);

  const replace = (lead) =>
    setColumns((known) => {
      const next = {};
      for (const [status, cards] of Object.entries(known)) next[status] = cards.filter((card) => card._id !== lead._id);
      next[lead.status] = [lead, ...(next[lead.status] ?? [])];
      return next;
    });

  const find = (id) =>
    Object.values(columns)
      .flat()
      .find((card) => card._id === id);

  const move = async (lead, status) => {
    if (!lead || lead.status === status) return;
    setNotice('');
    try {
      const { body: current, headers } = await api(`/leads/${lead._id}`);
      if (current.updatedAt !== lead.updatedAt) {
        replace(current);
        setNotice(t('changedElsewhere'));
        return;
      }
      const { body: moved } = await api(`/leads/${lead._id}/status`, {
        method: 'PUT',
        body: { status },
        headers: { 'if-match': headers.get('etag') },
      });
      replace(moved);
      setNotice(t('moved'));
    } catch (failure) {
      if (failure.status !== 412) return setNotice(failure.message);
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
        <section key=${status} class="column" data-status=${status} aria-labelledby=${`column-${status}`}
          onDragOver=${(event) => canMove && event.preventDefault()}
          onDrop=${(event) => {
            event.preventDefault();
            if (dragged) move(find(dragged), status);
            setDragged(undefined);
          }}>
          <h2 id=${`column-${status}`}>${status}</h2>
          <ul>
            ${(columns[status] ?? []).map(
              (lead) =>
                html`<${Card} key=${lead._id} lead=${lead} statuses=${statuses} canMove=${canMove} onMove=${move}
                  onDrag=${setDragged} />`,
            )}
          </ul>
        </section>`,
      )}
    </div>`;
}

function Card({ lead, statuses, canMove, onMove, onDrag }) {
  const [target, setTarget] = useState(lead.status);
  const meta = [lead.email, lead.source, `${t('score')} ${lead.score}`].filter(Boolean).join(' · ');
  return html`
    <li class="card" data-id=${lead._id} draggable=${canMove}
      onDragStart=${(event) => {
        // Some browsers start no drag without data.
        event.dataTransfer.setData('text/plain', lead.name);
        onDrag(lead._id);
      }}
>
      <span class="name">${lead.name}</span>
      <span class="meta">${meta}</span>
      ${
        canMove &&
        html`<form class="move" onSubmit=${(event) => {
          event.preventDefault();
          onMove(lead, target);
        }}>
          <label>${t('moveTo')}
            <select value=${target} onChange=${(event) => setTarget(event.currentTarget.value)}>
              ${statuses.map((option) => html`<option value=${option}>${option}</option>`)}
            </select>
          </label>
          <button type="submit">${t('move')}</button>
        </form>`
      }
    </li>`;
}
