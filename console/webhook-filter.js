import { api } from './api.js';
import { t } from './i18n.js';
import { html, useState } from './vendor/preact.js';

/**
 * A subscription's filter (SPEC §22) in words, and, for a token that may write, an editor of its
 * JSON: the API checks it, and its answer says which part is at fault.
 */
export function WebhookFilter({ hook, canWrite, onSaved }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [problem, setProblem] = useState(undefined);
  const [notice, setNotice] = useState('');

  const open = () => {
    setText(hook.filter ? JSON.stringify(hook.filter, null, 2) : '');
    setProblem(undefined);
    setNotice('');
    setEditing(true);
  };
  const save = async () => {
    setProblem(undefined);
    let filter = null;
    if (text.trim() !== '') {
      try {
        filter = JSON.parse(text);
      } catch (error) {
        setProblem({ message: t('filterNotJson', { reason: error.message }), details: [] });
        return;
      }
    }
    try {
      const { body } = await api(`/webhooks/${hook.id}`, { method: 'PUT', body: { filter } });
      setEditing(false);
      setNotice(t('filterSaved'));
      onSaved(body);
    } catch (failure) {
      setProblem({ message: failure.message, details: failure.body?.details ?? [] });
    }
  };

  return html`
    <section class="details webhook-filter" aria-labelledby="filter-title">
      <h2 id="filter-title">${t('filter')}</h2>
      <${FilterSummary} hook=${hook} />
      <p class="notice" role="status" aria-live="polite">${notice}</p>
      ${canWrite && !editing && html`<button type="button" class="secondary" onClick=${open}>${t('editFilter')}</button>`}
      ${
        editing &&
        html`<form class="filter-editor" onSubmit=${(event) => {
          event.preventDefault();
          save();
        }}>
          <label class="field" for="filter-json">${t('filterJson')}</label>
          <p class="help" id="filter-help">${t('filterHelp')}</p>
          <textarea id="filter-json" rows="12" spellcheck="false" aria-describedby="filter-help"
            aria-invalid=${problem ? 'true' : 'false'} value=${text}
            onInput=${(event) => setText(event.currentTarget.value)}></textarea>
          ${
            problem &&
            html`<div class="error" role="alert">${
              // Each detail names its part; the message alone when there is none (malformed JSON).
              problem.details.length === 0
                ? html`<p>${problem.message}</p>`
                : html`<ul>${problem.details.map((detail) => html`<li data-field=${detail.field}>${detail.message}</li>`)}</ul>`
            }</div>`
          }
          <div class="actions">
            <button type="submit">${t('save')}</button>
            <button type="button" class="secondary" onClick=${() => setEditing(false)}>${t('cancel')}</button>
          </div>
        </form>`
      }
    </section>`;
}

/** The filter as sentences: one line per part, `where` as a formula. */
function FilterSummary({ hook }) {
  const filter = hook.filter;
  if (!filter || Object.keys(filter).length === 0) {
    return html`<p data-testid="filter-summary">${t('noFilter', { events: hook.events.join(', ') })}</p>`;
  }
  const lines = [
    filter.types && [t('filterTypes'), filter.types.join(', ')],
    filter.changedFields && [t('filterChanged'), filter.changedFields.join(', ')],
    filter.where && [t('filterWhere'), conditionText(filter.where, true)],
    filter.excludeActors && [
      t('filterExclude'),
      filter.excludeActors.map((actor) => (actor === 'self' ? t('selfActor') : actor)).join(', '),
    ],
  ].filter(Boolean);
  return html`<dl data-testid="filter-summary">
    ${lines.map(([label, text]) => html`<dt>${label}</dt><dd>${text}</dd>`)}
  </dl>`;
}

/** `where` in words: `status = "won" and (score ≥ 50 or not (email has a value))`. */
export function conditionText(condition, top = false) {
  const [key, value] = Object.entries(condition)[0] ?? [];
  if (key === 'all' || key === 'any') {
    const joined = value.map((inner) => conditionText(inner)).join(` ${t(key === 'all' ? 'and' : 'or')} `);
    return top || value.length === 1 ? joined : `(${joined})`;
  }
  if (key === 'not') return `${t('not')} (${conditionText(value, true)})`;
  const [operator, operand] = Object.entries(value ?? {})[0] ?? [];
  const shown = (item) => JSON.stringify(item);
  switch (operator) {
    case 'eq':
      return `${key} = ${shown(operand)}`;
    case 'neq':
      return `${key} ≠ ${shown(operand)}`;
    case 'in':
      return `${key} ${t('isOneOf')} ${operand.map(shown).join(', ')}`;
    case 'gte':
      return `${key} ≥ ${shown(operand)}`;
    case 'lte':
      return `${key} ≤ ${shown(operand)}`;
    case 'exists':
      return `${key} ${t(operand ? 'hasValue' : 'hasNoValue')}`;
    default:
      return `${key} ?`;
  }
}
