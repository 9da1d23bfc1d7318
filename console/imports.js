import { api } from './api.js';
import { language, t } from './i18n.js';
import { ImportErrors } from './import-errors.js';
import { html, useEffect, useRef, useState } from './vendor/preact.js';

/** How often a running import (or its revert) is read again. */
const POLL_MS = 1000;
const RESOURCES = [
  { resource: 'lead', scopes: 'leads' },
  { resource: 'customer', scopes: 'customers' },
];
const MEDIA_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson' };

const number = (value) => value.toLocaleString(language === 'en' ? 'en' : 'pt-BR');
const isOver = (job) => ['succeeded', 'failed', 'cancelled'].includes(job.status);

/**
 * Imports (SPEC §23): a CSV or NDJSON file of leads or customers (the write scope of one), tried
 * first as a dry run; the import's progress, read every second; its refused rows; cancel while it
 * runs, revert once it ended, with what the revert skipped.
 */
export function ImportsPage({ who }) {
  const writable = RESOURCES.filter(({ scopes }) => who.scopes.includes(`${scopes}:write`));
  const [resource, setResource] = useState(writable[0]?.resource);
  const [file, setFile] = useState(undefined);
  const [upsert, setUpsert] = useState('');
  const [job, setJob] = useState(undefined);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState('');
  const heading = useRef(null);
  const scopes = RESOURCES.find((option) => option.resource === resource)?.scopes;
  const canUpsert = who.scopes.includes(`${scopes}:read`);

  // While the import (or its revert) runs: read it again every second.
  const running = job && (!isOver(job) || job.revert?.status === 'running');
  useEffect(() => {
    if (!running) return undefined;
    const timer = setTimeout(() => {
      api(`/imports/${job.id}`)
        .then(({ body }) => {
          setError('');
          setJob((known) => (known?.id === body.id ? { ...known, ...body } : known));
        })
        .catch((failure) => {
          // Shown, and read again a second later: a passing failure does not stop the progress.
          setError(failure.message);
          setJob((known) => known && { ...known });
        });
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [job]);

  const start = async (dryRun) => {
    setError('');
    const format = formatOf(file);
    if (!file) return setError(t('importNoFile'));
    if (!format) return setError(t('importUnknownFormat', { name: file.name }));
    const query = new URLSearchParams({ resource });
    if (upsert && canUpsert) query.set('upsert', upsert);
    if (dryRun) query.set('dryRun', 'true');
    setSending(true);
    try {
      const { body } = await api(`/imports?${query}`, {
        method: 'POST',
        file,
        contentType: MEDIA_TYPES[format],
      });
      const { body: read } = await api(`/imports/${body.id}`);
      setJob({ ...read, fileName: file.name });
      setTimeout(() => heading.current?.focus());
    } catch (failure) {
      setError(failure.message);
    } finally {
      setSending(false);
    }
  };
  const act = async (action) => {
    setError('');
    try {
      const { body } = await api(`/imports/${job.id}/${action}`, { method: 'POST' });
      setJob((known) => ({ ...known, ...body }));
    } catch (failure) {
      setError(failure.message);
    }
  };

  if (!resource) return html`<h1>${t('imports')}</h1><p>${t('forbidden')}</p>`;
  return html`
    <h1>${t('imports')}</h1>
    <p class="help">${t('importHelp')}</p>
    <form class="import-form" onSubmit=${(event) => event.preventDefault()}>
      ${
        writable.length > 1 &&
        html`<fieldset class="switch">
          <legend>${t('records')}</legend>
          ${writable.map(
            (
              option,
            ) => html`<label class="import-choice"><input type="radio" name="import-resource" value=${option.resource}
              checked=${option.resource === resource} onChange=${() => setResource(option.resource)} />
              ${t(option.scopes)}</label>`,
          )}
        </fieldset>`
      }
      <label class="import-field">${t('importFile')}
        <input type="file" name="file" accept=".csv,.ndjson,.jsonl,text/csv,application/x-ndjson"
          onChange=${(event) => setFile(event.currentTarget.files?.[0])} />
      </label>
      <label class="import-field">${t('importUpsert')}
        <select name="upsert" value=${canUpsert ? upsert : ''} disabled=${!canUpsert}
          aria-describedby="upsert-help" onChange=${(event) => setUpsert(event.currentTarget.value)}>
          <option value="">${t('upsert_none')}</option>
          <option value="email">${t('upsert_email')}</option>
          <option value="externalId">${t('upsert_externalId')}</option>
        </select>
      </label>
      <p class="help" id="upsert-help">${t(canUpsert ? 'importUpsertHelp' : 'importUpsertNeedsRead')}</p>
      <div class="import-actions">
        <button type="button" disabled=${sending || running} onClick=${() => start(true)}>${t('importDryRun')}</button>
        <button type="button" class="secondary" disabled=${sending || running} onClick=${() => start(false)}>
          ${t('importRun')}</button>
      </div>
      ${sending && html`<p role="status">${t('importSending')}</p>`}
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${job && html`<${ImportRun} job=${job} heading=${heading} onAct=${act} onRunForReal=${() => start(false)} busy=${sending} />`}`;
}

/** The import under way or done: its progress, counts, actions, refused rows and revert. */
function ImportRun({ job, heading, onAct, onRunForReal, busy }) {
  const [confirming, setConfirming] = useState(false);
  const over = isOver(job);
  const percent = job.total === 0 ? 100 : Math.floor((100 * job.processed) / job.total);
  const canRevert = over && !job.dryRun && !job.revert && job.created + job.updated > 0;
  // The live region tells screen readers the progress at each tenth, not at every read of it.
  return html`
    <section class="import-run details" aria-labelledby="import-run-title" data-status=${job.status}>
      <h2 id="import-run-title" tabindex="-1" ref=${heading}>
        ${t(job.dryRun ? 'importDryRunTitle' : 'importRunTitle', { name: job.fileName })}
      </h2>
      <label for="import-progress">${t('importProgress')}</label>
      <progress id="import-progress" max=${Math.max(job.total, 1)} value=${over ? Math.max(job.total, 1) : job.processed}>
        ${percent}%</progress>
      <p class="notice import-status">${statusText(job, percent)}</p>
      <p class="visually-hidden" role="status" aria-live="polite">
        ${statusText(job, over ? percent : Math.floor(percent / 10) * 10)}</p>
      <dl class="import-counts">
        <dt>${t(job.dryRun ? 'importWouldCreate' : 'importCreated')}</dt><dd data-count="created">${number(job.created)}</dd>
        <dt>${t(job.dryRun ? 'importWouldUpdate' : 'importUpdated')}</dt><dd data-count="updated">${number(job.updated)}</dd>
        <dt>${t('importFailed')}</dt><dd data-count="failed">${number(job.failed)}</dd>
      </dl>
      <div class="import-actions">
        ${!over && html`<button type="button" class="danger" onClick=${() => onAct('cancel')}>${t('importCancel')}</button>`}
        ${
          over &&
          job.dryRun &&
          job.status === 'succeeded' &&
          html`<button type="button" disabled=${busy} onClick=${onRunForReal}>${t('importRunForReal')}</button>`
        }
        ${
          canRevert &&
          !confirming &&
          html`<button type="button" class="secondary" onClick=${() => setConfirming(true)}>${t('importRevert')}</button>`
        }
      </div>
      ${
        canRevert &&
        confirming &&
        html`<div class="confirm" role="group" aria-labelledby="revert-question">
          <p id="revert-question">${t('importRevertQuestion', { created: number(job.created), updated: number(job.updated) })}</p>
          <button type="button" class="danger" onClick=${() => onAct('revert')}>${t('importRevertConfirm')}</button>
          <button type="button" class="secondary" onClick=${() => setConfirming(false)}>${t('no')}</button>
        </div>`
      }
      ${job.revert && html`<${RevertOutcome} job=${job} />`}
      ${over && job.failed > 0 && html`<${ImportErrors} key=${`${job.id}-import`} id=${job.id} phase="import" />`}
    </section>`;
}

function RevertOutcome({ job }) {
  const { status, deleted, restored, skipped } = job.revert;
  return html`
    <div class="import-revert">
      <h3>${t('importRevertTitle')}</h3>
      <p role="status" aria-live="polite">
        ${t(status === 'running' ? 'importReverting' : 'importReverted', {
          deleted: number(deleted),
          restored: number(restored),
          skipped: number(skipped),
        })}
      </p>
      ${
        status === 'succeeded' &&
        skipped > 0 &&
        html`<${ImportErrors} key=${`${job.id}-revert`} id=${job.id} phase="revert" />`
      }
    </div>`;
}

function statusText(job, percent) {
  const values = { processed: number(job.processed), total: number(job.total), percent };
  if (job.status === 'succeeded') return t(job.dryRun ? 'importDryRunDone' : 'importDone', values);
  return t(`import_${job.status}`, values);
}

/** csv or ndjson, from the file's name (or its type, when the name says nothing). */
function formatOf(file) {
  if (!file) return undefined;
  const extension = /\.([a-z]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  if (extension === 'csv' || file.type === 'text/csv') return 'csv';
  if (extension === 'ndjson' || extension === 'jsonl' || file.type === 'application/x-ndjson') return 'ndjson';
  return undefined;
}
