import { api } from './api.js';
import { t } from './i18n.js';
import { MergeCompare } from './merge-compare.js';
import { fieldLabel, when } from './merge-fields.js';
import { recentMerges } from './recent-merges.js';
import { html, useEffect, useRef, useState } from './vendor/preact.js';

const PAGE = 20;
const RESOURCES = ['leads', 'customers'];

/**
 * Duplicate leads or customers (SPEC §21): the groups sharing an e-mail or a phone, largest first
 * ("load more" by cursor), each opened side by side to merge (with the resource's read and write
 * scopes); the outcome of a merge or an undo, with Undo (and, when later changes block it, "undo
 * anyway"); and the merges of this session, each with its Undo.
 */
export function DuplicatesPage({ who }) {
  const readable = RESOURCES.filter((resource) => who.scopes.includes(`${resource}:read`));
  const canMerge = (resource) => who.scopes.includes(`${resource}:read`) && who.scopes.includes(`${resource}:write`);
  const [resource, setResource] = useState(readable[0]);
  const [kind, setKind] = useState('');
  const [groups, setGroups] = useState(undefined);
  const [cursor, setCursor] = useState(undefined);
  const [opened, setOpened] = useState(undefined);
  const [error, setError] = useState('');
  const [outcome, setOutcome] = useState(undefined);
  const [merges, setMerges] = useState(() => recentMerges.list());
  // The list asked for last: an answer to an earlier one (another resource, another key) is dropped.
  const asked = useRef(0);
  const outcomeBox = useRef(null);
  const heading = useRef(null);
  // After "load more", the first group it brought takes the focus (the button may be gone).
  const focusGroup = useRef(undefined);

  const load = async (after) => {
    const ask = ++asked.current;
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (kind) params.set('kind', kind);
    if (after) params.set('cursor', after);
    setError('');
    try {
      const { body, headers } = await api(`/${resource}/duplicates?${params}`);
      if (ask !== asked.current) return;
      if (after) focusGroup.current = groupKey(body[0]);
      setGroups((known) => (after ? [...(known ?? []), ...body] : body));
      setCursor(headers.get('x-next-cursor') ?? undefined);
    } catch (failure) {
      if (ask === asked.current) setError(failure.message);
    }
  };
  useEffect(() => {
    setOpened(undefined);
    setGroups(undefined);
    setCursor(undefined);
    if (resource) load(undefined);
  }, [resource, kind]);
  useEffect(() => {
    if (!focusGroup.current) return;
    document.querySelector(`[data-key="${CSS.escape(focusGroup.current)}"] .open-group`)?.focus();
    focusGroup.current = undefined;
  }, [groups]);
  useEffect(() => {
    if (outcome) outcomeBox.current?.focus();
  }, [outcome]);

  const close = (key) => {
    setOpened(undefined);
    // Focus goes back to the button that opened it, once it shows again.
    setTimeout(() => document.querySelector(`[data-key="${CSS.escape(key)}"] .open-group`)?.focus());
  };

  const merged = (answer, names) => {
    const merge = {
      id: answer.merge.id,
      resource,
      targetId: answer.merge.targetId,
      sourceIds: answer.merge.sourceIds,
      names,
      createdAt: answer.merge.createdAt,
      state: 'merged',
    };
    setMerges(recentMerges.add(merge));
    setOpened(undefined);
    setOutcome({ state: 'merged', merge });
    load(undefined);
  };

  const undo = async (merge, force = false) => {
    try {
      const { body } = await api(`/merges/${merge.id}/undo${force ? '?force=true' : ''}`, { method: 'POST' });
      setMerges(recentMerges.mark(merge.id, 'undone'));
      setOutcome({ state: 'undone', merge, restored: body.restoredIds.length, forced: force });
      if (merge.resource === resource) {
        setOpened(undefined);
        load(undefined);
      }
    } catch (failure) {
      const { status, body } = failure;
      if (status === 409 && body?.blockers) {
        setOutcome({ state: 'blocked', merge, blockers: body.blockers, forced: force, message: failure.message });
        return;
      }
      // A 409 without blockers: undone already (elsewhere); a 410: too old to undo.
      if (status === 409) setMerges(recentMerges.mark(merge.id, 'undone'));
      if (status === 410) setMerges(recentMerges.mark(merge.id, 'expired'));
      setOutcome({ state: 'failed', merge, message: failure.message });
    }
  };

  if (!resource) return html`<h1>${t('duplicates')}</h1><p>${t('forbidden')}</p>`;
  return html`
    <h1 tabindex="-1" ref=${heading}>${t('duplicates')}</h1>
    <p class="help">${t('duplicatesHelp')}</p>
    ${
      outcome &&
      html`<${Outcome} outcome=${outcome} box=${outcomeBox} canUndo=${canMerge(outcome.merge.resource)}
        onUndo=${undo} onDismiss=${() => {
          setOutcome(undefined);
          heading.current.focus();
        }} />`
    }
    <div class="filters">
      ${
        readable.length > 1 &&
        html`<fieldset class="switch">
          <legend>${t('records')}</legend>
          ${readable.map(
            (option) => html`<label class="check"><input type="radio" name="resource" value=${option}
              checked=${option === resource} onChange=${() => setResource(option)} /> ${t(option)}</label>`,
          )}
        </fieldset>`
      }
      <label>${t('matchKey')}
        <select name="kind" value=${kind} onChange=${(event) => setKind(event.currentTarget.value)}>
          <option value="">${t('anyKey')}</option>
          <option value="email">${t('key_email')}</option>
          <option value="phone">${t('key_phone')}</option>
        </select>
      </label>
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <h2>${t(`groups_${resource}`)}</h2>
    ${!groups && !error && html`<p>${t('loading')}</p>`}
    ${groups && groups.length === 0 && html`<p>${t('noDuplicates')}</p>`}
    <ul class="groups">
      ${(groups ?? []).map((group) => {
        const key = groupKey(group);
        const isOpen = opened === key;
        return html`<li key=${key} data-key=${key}>
          <div class="group-head">
            <span class="name">${group.key.value}</span>
            <span class="meta">${t(`key_${group.key.kind}`)} · ${t('recordCount', { count: group.count })}</span>
            <button type="button" class="secondary open-group" aria-expanded=${isOpen}
              onClick=${() => (isOpen ? close(key) : setOpened(key))}>
              ${t(isOpen ? 'closeCompare' : 'compare')}<span class="visually-hidden"> ${group.key.value}</span></button>
          </div>
          ${
            isOpen &&
            html`<${MergeCompare} key=${key} resource=${resource} group=${group} canMerge=${canMerge(resource)}
              onMerged=${merged} onClose=${() => close(key)} />`
          }
        </li>`;
      })}
    </ul>
    ${cursor && html`<button type="button" onClick=${() => load(cursor)}>${t('loadMore')}</button>`}
    <${RecentMerges} merges=${merges} canMerge=${canMerge} onUndo=${undo} />`;
}

function groupKey(group) {
  return group && `${group.key.kind}:${group.key.value}`;
}

/** A merge's name in a sentence: the record kept, and how many went into it. */
function mergeSummary(merge) {
  return t(`mergeSummary_${merge.resource}`, {
    count: merge.sourceIds.length,
    name: merge.names[merge.targetId] ?? merge.targetId,
  });
}

/**
 * What the last merge or undo did, where the focus goes after it: merged (with Undo), undone, or
 * blocked by later changes (each named, with "undo anyway", which keeps them).
 */
function Outcome({ outcome, box, canUndo, onUndo, onDismiss }) {
  const { state, merge } = outcome;
  const name = (id) => merge.names[id] ?? id;
  let message;
  if (state === 'merged') message = mergeSummary(merge);
  else if (state === 'undone')
    message = t(outcome.forced ? 'undoneForcedNotice' : 'undoneNotice', { count: outcome.restored });
  else if (state === 'blocked') message = outcome.forced ? outcome.message : t('undoBlocked');
  else message = outcome.message;
  return html`
    <div class=${`outcome ${state}`} role="group" aria-labelledby="outcome-message" tabindex="-1" ref=${box}>
      <p id="outcome-message" role=${state === 'failed' ? 'alert' : 'status'}>${message}</p>
      ${
        state === 'blocked' &&
        html`<ul class="blockers">
          ${outcome.blockers.map(
            (blocker) =>
              html`<li data-reason=${blocker.reason}>${t(`blocker_${blocker.reason}`, {
                record: name(blocker.recordId),
                field: fieldLabel(blocker.field),
              })}</li>`,
          )}
        </ul>`
      }
      ${state === 'blocked' && !outcome.forced && html`<p class="help">${t('undoAnywayHelp')}</p>`}
      <div class="actions">
        ${
          canUndo &&
          state === 'merged' &&
          html`<button type="button" onClick=${() => onUndo(merge)}>${t('undo')}</button>`
        }
        ${
          canUndo &&
          state === 'blocked' &&
          !outcome.forced &&
          html`<button type="button" class="danger" onClick=${() => onUndo(merge, true)}>${t('undoAnyway')}</button>`
        }
        <button type="button" class="secondary" onClick=${onDismiss}>${t('dismiss')}</button>
      </div>
    </div>`;
}

/** The merges of this session, newest first, each with Undo while it can be undone. */
function RecentMerges({ merges, canMerge, onUndo }) {
  if (merges.length === 0) return null;
  return html`
    <section class="recent-merges" aria-labelledby="recent-merges">
      <h2 id="recent-merges">${t('recentMerges')}</h2>
      <ul class="records">
        ${merges.map(
          (merge) => html`<li data-id=${merge.id} data-state=${merge.state}>
            <span><time datetime=${merge.createdAt}>${when(merge.createdAt)}</time> ${mergeSummary(merge)}</span>
            ${merge.state !== 'merged' && html` <span class="meta">${t(`merge_${merge.state}`)}</span>`}
            ${
              merge.state === 'merged' &&
              canMerge(merge.resource) &&
              html` <button type="button" class="secondary" onClick=${() => onUndo(merge)}>
                ${t('undo')}<span class="visually-hidden"> — ${mergeSummary(merge)}</span></button>`
            }
          </li>`,
        )}
      </ul>
    </section>`;
}
