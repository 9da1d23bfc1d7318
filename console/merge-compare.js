import { api } from './api.js';
import { t } from './i18n.js';
import { defaultHolder, oldestFirst, rowLabel, rowsOf, sameInAll, shownValue, when } from './merge-fields.js';
import { Sideways } from './sideways.js';
import { html, useEffect, useRef, useState } from './vendor/preact.js';

/** A merge keeps one record and takes up to 10 into it (SPEC §21): a comparison shows at most this many. */
export const MOST_COMPARED = 11;

/**
 * The records of a duplicate group side by side (SPEC §21): a column per record, a row per field.
 * With `canMerge`, a choice per column of the record kept (the target; the oldest at first) and
 * whether it takes part, and per row of the record whose value to keep, preselected as the server
 * would choose; "Preview" asks the merge with dryRun, "Merge" sends it with If-Match on the
 * target (a 412, or a record gone, reads the records again and says so).
 */
export function MergeCompare({ resource, group, canMerge, onMerged, onClose }) {
  const [records, setRecords] = useState(undefined);
  const [etags, setEtags] = useState({});
  const [pipelines, setPipelines] = useState(undefined);
  const [targetId, setTargetId] = useState(undefined);
  const [left, setLeft] = useState([]);
  const [choices, setChoices] = useState({});
  const [preview, setPreview] = useState(undefined);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState(undefined);
  const [busy, setBusy] = useState(false);
  const heading = useRef(null);
  const previewHeading = useRef(null);
  const groupKey = `${group.key.kind}:${group.key.value}`;

  const read = async () => {
    const found = [];
    const tags = {};
    // One after the other: a tenant's share of the server is a few requests at a time (SPEC §10).
    for (const id of group.ids.slice(0, MOST_COMPARED)) {
      try {
        const { body, headers } = await api(`/${resource}/${id}`);
        found.push(body);
        tags[id] = headers.get('etag');
      } catch (failure) {
        if (failure.status !== 404) throw failure;
      }
    }
    const ordered = oldestFirst(found);
    setRecords(ordered);
    setEtags(tags);
    setTargetId((known) => (ordered.some((record) => record._id === known) ? known : ordered[0]?._id));
    setPreview(undefined);
  };
  useEffect(() => {
    heading.current.focus();
    read().catch((failure) => setProblem({ message: failure.message, details: [] }));
    if (resource === 'leads') {
      api('/pipelines')
        .then(({ body }) => setPipelines(body))
        .catch(() => setPipelines(undefined));
    }
  }, [resource, groupKey]);
  useEffect(() => {
    if (preview) previewHeading.current?.focus();
  }, [preview]);

  const target = records?.find((record) => record._id === targetId);
  const taking = (records ?? []).filter((record) => record === target || !left.includes(record._id));
  const sources = taking.filter((record) => record !== target);
  const rows = records ? rowsOf(resource, records) : [];
  const choosable = rows.filter((row) => !sameInAll(row, taking));
  const chosen = (row) => {
    const choice = choices[row.key];
    return taking.some((record) => record._id === choice) ? choice : defaultHolder(row, target, sources);
  };

  const change = (update) => {
    update();
    setPreview(undefined);
  };
  const chooseTarget = (id) =>
    change(() => {
      setTargetId(id);
      setLeft((known) => known.filter((other) => other !== id));
    });
  const include = (id, taken) =>
    change(() => setLeft((known) => (taken ? known.filter((other) => other !== id) : [...known, id])));

  const send = async (dryRun) => {
    setProblem(undefined);
    setNotice('');
    setBusy(true);
    const fields = Object.fromEntries(choosable.map((row) => [row.key, chosen(row)]));
    const body = { targetId, sourceIds: sources.map((record) => record._id), fields };
    if (dryRun) body.dryRun = true;
    try {
      const headers = etags[targetId] ? { 'if-match': etags[targetId] } : {};
      const { body: answer } = await api(`/${resource}/merge`, { method: 'POST', body, headers });
      if (dryRun) setPreview(answer.record);
      else onMerged(answer, Object.fromEntries(taking.map((record) => [record._id, record.name])));
    } catch (failure) {
      if (failure.status === 412 || failure.status === 404) {
        await read().catch(() => undefined);
        setNotice(t('recordsChanged'));
      } else {
        setProblem({ message: failure.message, details: failure.body?.details ?? [] });
      }
    } finally {
      setBusy(false);
    }
  };

  const title = t('compareTitle', { key: group.key.value });
  return html`
    <section class="compare" aria-labelledby=${`compare-${groupKey}`}>
      <h3 id=${`compare-${groupKey}`} tabindex="-1" ref=${heading}>${title}</h3>
      <p class="notice" role="status" aria-live="polite">${notice}</p>
      ${
        problem &&
        html`<div class="error" role="alert"><p>${problem.message}</p>
          <ul>${problem.details.map((detail) => html`<li>${detail.message}</li>`)}</ul></div>`
      }
      ${!records && !problem && html`<p>${t('loading')}</p>`}
      ${
        records &&
        records.length < 2 &&
        html`<p>${t('groupGone')}</p><button type="button" class="secondary" onClick=${onClose}>${t('close')}</button>`
      }
      ${group.count > MOST_COMPARED && html`<p class="help">${t('groupTooLarge', { count: group.count, most: MOST_COMPARED })}</p>`}
      ${
        records &&
        records.length >= 2 &&
        html`<form class="merge-form" onSubmit=${(event) => {
          event.preventDefault();
          send(false);
        }}>
          ${canMerge && html`<p class="help">${t('mergeHelp')}</p>`}
          <${Sideways} label=${t('compareTable', { key: group.key.value })} cue=${t('compareCue')} cueId=${`compare-cue-${groupKey}`} inner="compare-scroll"
            watch=${records.map((record) => record._id).join()}>
            <${CompareTable} rows=${rows} records=${records} target=${target} taking=${taking} chosen=${chosen}
              choosable=${choosable} canMerge=${canMerge} pipelines=${pipelines} caption=${title}
              onTarget=${chooseTarget} onInclude=${include}
              onChoose=${(row, id) => change(() => setChoices((known) => ({ ...known, [row.key]: id })))} />
          <//>
          ${
            canMerge &&
            html`<div class="actions">
              <button type="button" class="secondary" disabled=${busy || sources.length === 0} onClick=${() => send(true)}>
                ${t('preview')}</button>
              <button type="submit" disabled=${busy || sources.length === 0}>
                ${t('mergeInto', { count: sources.length, name: target?.name ?? '' })}</button>
              <button type="button" class="secondary" onClick=${onClose}>${t('close')}</button>
            </div>`
          }
          ${!canMerge && html`<button type="button" class="secondary" onClick=${onClose}>${t('close')}</button>`}
        </form>`
      }
      ${
        preview &&
        html`<section class="preview" aria-labelledby=${`preview-${groupKey}`}>
          <h4 id=${`preview-${groupKey}`} tabindex="-1" ref=${previewHeading}>${t('previewTitle')}</h4>
          <dl>
            ${rowsOf(resource, [preview, ...records]).map(
              (row) =>
                html`<dt>${rowLabel(row)}</dt><dd data-field=${row.key}><${Value} value=${shownValue(row, preview, pipelines)} /></dd>`,
            )}
          </dl>
        </section>`
      }
    </section>`;
}

function CompareTable({
  rows,
  records,
  target,
  taking,
  chosen,
  choosable,
  canMerge,
  pipelines,
  caption,
  onTarget,
  onInclude,
  onChoose,
}) {
  return html`
    <table class="side-by-side">
      <caption class="visually-hidden">${caption}</caption>
      <thead>
        <tr>
          <th scope="col">${t('field')}</th>
          ${records.map(
            (record) => html`<th scope="col" data-id=${record._id} class=${record === target ? 'target' : undefined}>
              <span class="name">${record.name}</span>
              <span class="meta">${t('createdOn', { date: when(record.createdAt) })}</span>
              ${record === target && html`<span class="badge">${t('kept')}</span>`}
              ${
                canMerge &&
                html`<label class="check"><input type="radio" name="target" value=${record._id}
                    checked=${record === target} onChange=${() => onTarget(record._id)} />
                  ${t('keepThis')}<span class="visually-hidden"> ${record.name}</span></label>
                <label class="check"><input type="checkbox" name="take" value=${record._id}
                    checked=${taking.includes(record)} disabled=${record === target}
                    onChange=${(event) => onInclude(record._id, event.currentTarget.checked)} />
                  ${t('takePart')}<span class="visually-hidden"> ${record.name}</span></label>`
              }
            </th>`,
          )}
        </tr>
      </thead>
      <tbody>
        ${rows.map((row) => {
          const choice = canMerge && choosable.includes(row);
          const holder = choice && chosen(row);
          return html`<tr data-field=${row.key}>
            <th scope="row">${rowLabel(row)}</th>
            ${records.map((record) => {
              const value = shownValue(row, record, pipelines);
              if (!choice || !taking.includes(record)) {
                return html`<td data-id=${record._id}><${Value} value=${value} /></td>`;
              }
              return html`<td data-id=${record._id} class=${holder === record._id ? 'chosen' : undefined}>
                <label class="pick"><input type="radio" name=${`keep-${row.key}`} value=${record._id}
                    checked=${holder === record._id} onChange=${() => onChoose(row, record._id)} />
                  <span class="visually-hidden">${t('valueFrom', { field: rowLabel(row), name: record.name })} </span>
                  <${Value} value=${value} /></label>
              </td>`;
            })}
          </tr>`;
        })}
      </tbody>
    </table>`;
}

/** A value as text, or a dash that reads as "empty". */
export function Value({ value }) {
  const main =
    value.text === null || value.text === ''
      ? html`<span class="empty"><span aria-hidden="true">—</span><span class="visually-hidden">${t('empty')}</span></span>`
      : html`<span class="value">${value.text}</span>`;
  return value.meta ? html`${main} <span class="meta">${value.meta}</span>` : main;
}
