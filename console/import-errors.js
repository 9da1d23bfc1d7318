import { api } from './api.js';
import { t } from './i18n.js';
import { html, useEffect, useRef, useState } from './vendor/preact.js';

const PAGE = 20;

/**
 * The rows an import refused (phase `import`), or the records its revert left as they were
 * (phase `revert`), a page at a time with "load more"; the first row a page brings takes the focus.
 */
export function ImportErrors({ id, phase }) {
  const [rows, setRows] = useState([]);
  const [cursor, setCursor] = useState(undefined);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState('');
  const focusIndex = useRef(undefined);
  const list = useRef(null);

  const load = async (after) => {
    setError('');
    const params = new URLSearchParams({ phase, limit: String(PAGE) });
    if (after) params.set('cursor', after);
    try {
      const { body, headers } = await api(`/imports/${id}/errors?${params}`);
      if (after) focusIndex.current = rows.length;
      setRows((known) => (after ? [...known, ...body] : body));
      setCursor(headers.get('x-next-cursor') ?? undefined);
      setLoaded(true);
    } catch (failure) {
      setError(failure.message);
    }
  };
  useEffect(() => {
    load(undefined);
  }, [id, phase]);
  useEffect(() => {
    if (focusIndex.current === undefined) return;
    list.current?.children[focusIndex.current]?.focus();
    focusIndex.current = undefined;
  }, [rows]);

  const title = t(phase === 'revert' ? 'importSkippedTitle' : 'importErrorsTitle');
  return html`
    <div class="import-errors" data-phase=${phase}>
      <h3 id=${`import-errors-${phase}`}>${title}</h3>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${!loaded && !error && html`<p>${t('loading')}</p>`}
      <ul ref=${list} aria-labelledby=${`import-errors-${phase}`}>
        ${rows.map(
          (row) => html`<li tabindex="-1" data-row=${row.row}>
            <strong>${t('importRow', { row: row.row })}</strong>
            ${phase === 'revert' && row.recordId && html` <span class="record-id">${row.recordId}</span>`}
            ${phase === 'import' && row.field && html` <code>${row.field}</code>`}
            ${' '}<span class="message">${row.message}</span>
          </li>`,
        )}
      </ul>
      ${
        cursor &&
        html`<button type="button" class="secondary load-more" onClick=${() => load(cursor)}>${t('loadMore')}</button>`
      }
    </div>`;
}
