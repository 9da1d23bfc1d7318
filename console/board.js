import { api } from './api.js';
import { t } from './i18n.js';
import { PipelinePicker, usePipelines } from './pipelines.js';
import { Sideways } from './sideways.js';
import { html, useEffect, useRef, useState } from './vendor/preact.js';

const PER_COLUMN = 20;
/**
 * How many pages a column reads in a row to fill itself: a filtered page reads a bounded number of
 * rows and may come back short, even empty, with a next cursor (SPEC §6).
 */
const PAGES_PER_READ = 5;

/**
 * A column per stage of the chosen pipeline (SPEC §18, §20), each paged by keyset ("load more");
 * dragging a card to another column (or, by keyboard, choosing the column in the card's list and
 * pressing Move) changes the lead's status with If-Match. A lead changed elsewhere since the board
 * read it is not moved: the card is reloaded and says so. A token without leads:write sees the
 * board without the means to move.
 *
 * A column's count is of the cards it has read, with "+" while more are left to load: the API
 * counts a stage's leads only among those created in a period (the summary), not all of them.
 */
export function Board({ who }) {
  const canMove = who.scopes.includes('leads:write');
  const { pipelines, chosen, choose, error } = usePipelines();
  // Each stage's cards and the cursor of its next page, by stage key.
  const [columns, setColumns] = useState({});
  const [notice, setNotice] = useState('');
  // The card being dragged, from its dragstart to its drop: a drop with no card dragged moves nothing.
  const [dragged, setDragged] = useState(undefined);
  // The pipeline shown now: a column read for another one, chosen before, is dropped.
  const shown = useRef(undefined);

  const loadColumn = async (pipelineId, status, cursor) => {
    const page = await readColumn(pipelineId, status, cursor);
    if (shown.current !== pipelineId) return;
    setColumns((known) => {
      const before = cursor ? (known[status]?.cards ?? []) : [];
      const seen = new Set(before.map((card) => card._id));
      return {
        ...known,
        [status]: { cards: [...before, ...page.cards.filter((card) => !seen.has(card._id))], cursor: page.cursor },
      };
    });
    return page;
  };
  useEffect(() => {
    if (!chosen) return;
    shown.current = chosen.id;
    setColumns({});
    setNotice('');
    (async () => {
      // One after the other: a tenant's share of the server is a few requests at a time (SPEC §10).
      for (const stage of chosen.stages) await loadColumn(chosen.id, stage.key, undefined);
    })().catch((failure) => setNotice(failure.message));
  }, [chosen?.id]);

  const loadMore = async (status) => {
    try {
      const page = await loadColumn(chosen.id, status, columns[status]?.cursor);
      // The button is gone with the last page: the column's heading keeps the reader's place.
      if (page && !page.cursor) document.getElementById(`column-${status}`)?.focus();
    } catch (failure) {
      setNotice(failure.message);
    }
  };

  const replace = (lead) =>
    setColumns((known) => {
      const next = {};
      for (const [status, column] of Object.entries(known)) {
        next[status] = { ...column, cards: column.cards.filter((card) => card._id !== lead._id) };
      }
      // A lead moved to another pipeline elsewhere leaves this board.
      if (next[lead.status] && lead.pipeline === chosen.id) {
        next[lead.status] = { ...next[lead.status], cards: [lead, ...next[lead.status].cards] };
      }
      return next;
    });

  const find = (id) =>
    Object.values(columns)
      .flatMap((column) => column.cards)
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

  if (error) return html`<h1>${t('board')}</h1><p class="error" role="alert">${error}</p>`;
  if (!chosen) return html`<h1>${t('board')}</h1><p>${t('loading')}</p>`;
  return html`
    <h1>${t('board')}</h1>
    <div class="filters single">
      <${PipelinePicker} pipelines=${pipelines} value=${chosen.id} onChoose=${choose} />
    </div>
    <p class="notice" role="status" aria-live="polite">${notice}</p>
    <${Sideways} label=${t('board')} cue=${t('scrollCue')} watch=${chosen.id}>
      ${chosen.stages.map(
        (stage) => html`<${Column} key=${stage.key} stage=${stage} column=${columns[stage.key]} stages=${chosen.stages}
          canMove=${canMove} onMove=${move} onDrag=${setDragged} onLoadMore=${loadMore}
          onDrop=${() => {
            if (dragged) move(find(dragged), stage.key);
            setDragged(undefined);
          }} />`,
      )}
    <//>`;
}

/** A page of a stage's leads, following short pages (up to PAGES_PER_READ) until it holds some. */
async function readColumn(pipelineId, status, cursor) {
  const cards = [];
  let next = cursor;
  for (let read = 0; read < PAGES_PER_READ; read++) {
    const params = new URLSearchParams({ status, pipeline: pipelineId, limit: String(PER_COLUMN - cards.length) });
    params.set('sort', '-updatedAt');
    if (next) params.set('cursor', next);
    const { body, headers } = await api(`/leads?${params}`);
    cards.push(...body);
    next = headers.get('x-next-cursor') ?? undefined;
    if (!next || cards.length === PER_COLUMN) break;
  }
  return { cards, cursor: next };
}

function Column({ stage, column, stages, canMove, onMove, onDrag, onDrop, onLoadMore }) {
  const cards = column?.cards ?? [];
  const more = Boolean(column?.cursor);
  return html`
    <section class="column" data-status=${stage.key} data-kind=${stage.kind} aria-labelledby=${`column-${stage.key}`}
      onDragOver=${(event) => canMove && event.preventDefault()}
      onDrop=${(event) => {
        event.preventDefault();
        onDrop();
      }}>
      <h2 id=${`column-${stage.key}`} tabindex="-1">
        <span class="stage-label">${stage.label}</span>
        ${' '}<span class="column-count">${column ? `${cards.length}${more ? '+' : ''}` : '…'}</span>
        <span class="visually-hidden">${more ? t('moreToLoad') : ''}</span>
      </h2>
      <ul>
        ${cards.map(
          (lead) =>
            html`<${Card} key=${lead._id} lead=${lead} stages=${stages} canMove=${canMove} onMove=${onMove} onDrag=${onDrag} />`,
        )}
      </ul>
      ${
        more &&
        html`<button type="button" class="load-more" onClick=${() => onLoadMore(stage.key)}>
          ${t('loadMore')}<span class="visually-hidden"> — ${stage.label}</span>
        </button>`
      }
    </section>`;
}

function Card({ lead, stages, canMove, onMove, onDrag }) {
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
              ${stages.map((stage) => html`<option value=${stage.key}>${stage.label}</option>`)}
            </select>
          </label>
          <button type="submit">${t('move')}</button>
        </form>`
      }
    </li>`;
}
