import { api } from './api.js';
import { t } from './i18n.js';
import { PipelineEditor } from './pipeline-editor.js';
import { html, useEffect, useRef, useState } from './vendor/preact.js';

/**
 * The tenant's pipelines and their stages (SPEC §20): read with leads:read; created, changed and
 * deleted in the editor with pipelines:write.
 */
export function PipelinesPage({ who }) {
  const canEdit = who.scopes.includes('pipelines:write');
  const [pipelines, setPipelines] = useState(undefined);
  // 'new', or the id of the pipeline being edited.
  const [editing, setEditing] = useState(undefined);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState('');
  const heading = useRef(null);

  const load = () =>
    api('/pipelines')
      .then(({ body }) => setPipelines(body))
      .catch((failure) => setError(failure.message));
  useEffect(() => {
    load();
  }, []);
  const open = (which) => {
    setNotice('');
    setEditing(which);
  };
  const close = async (message) => {
    setEditing(undefined);
    setNotice(message ?? '');
    heading.current.focus();
    if (message) await load();
  };

  // Undefined for a new one, and for one gone meanwhile: an edit never turns into a creation.
  const edited = editing === 'new' ? undefined : pipelines?.find((pipeline) => pipeline.id === editing);
  return html`
    <h1 tabindex="-1" ref=${heading}>${t('pipelines')}</h1>
    <p class="notice" role="status" aria-live="polite">${notice}</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${!canEdit && html`<p class="help">${t('pipelinesReadOnly')}</p>`}
    ${canEdit && !editing && html`<button type="button" onClick=${() => open('new')}>${t('newPipeline')}</button>`}
    ${
      (editing === 'new' || edited) &&
      html`<${PipelineEditor} key=${editing} pipeline=${edited} pipelines=${pipelines} onDone=${close}
        onCancel=${() => close()} />`
    }
    ${!pipelines && !error && html`<p>${t('loading')}</p>`}
    <ul class="pipelines">
      ${(pipelines ?? []).map(
        (pipeline) => html`
        <li key=${pipeline.id} data-id=${pipeline.id}>
          <h2 id=${`pipeline-${pipeline.id}`}>
            ${pipeline.name} ${pipeline.default && html`<span class="badge">${t('defaultPipeline')}</span>`}
          </h2>
          <ol class="stage-list" aria-labelledby=${`pipeline-${pipeline.id}`}>
            ${pipeline.stages.map(
              (stage) => html`<li data-key=${stage.key} data-kind=${stage.kind}>
                <span class="name">${stage.label}</span> <span class="meta">${stage.key} · ${t(`kind_${stage.kind}`)}</span>
              </li>`,
            )}
          </ol>
          ${
            canEdit &&
            !editing &&
            html`<button type="button" class="secondary" onClick=${() => open(pipeline.id)}>
              ${t('edit')}<span class="visually-hidden"> ${pipeline.name}</span></button>`
          }
        </li>`,
      )}
    </ul>`;
}
