import { api } from './api.js';
import { t } from './i18n.js';
import { pipelineName } from './pipelines.js';
import { html, useEffect, useLayoutEffect, useRef, useState } from './vendor/preact.js';

const KINDS = ['open', 'won', 'lost'];
/** A new stage's key (SPEC §20); a key the pipeline has already is kept as it is. */
const NEW_KEY = '[a-z][a-z0-9_]{0,39}';

let stageIds = 0;

/** A stage as the editor holds it: `id` names its row while it moves; `kept` when the pipeline has it already. */
function draftStage(stage) {
  stageIds += 1;
  return stage
    ? { id: stageIds, key: stage.key, label: stage.label, kind: stage.kind, kept: true, keyTyped: true }
    : { id: stageIds, key: '', label: '', kind: 'open', kept: false, keyTyped: false };
}

/** A key for a new stage from its label: "Pós-venda" → "pos_venda" (ASCII, lower case, from a letter). */
export function keyOf(label) {
  return label
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+/, '')
    .slice(0, 40)
    .replace(/_+$/, '');
}

/**
 * Creates a pipeline, or edits one: its name, its stages (add, remove, relabel, change kind,
 * reorder by drag or by the "move up/down" buttons), default, delete. When the API answers 409 with
 * `leadCount` (stages removed, or the pipeline deleted, while they hold leads), it asks where the
 * leads go and sends the change again with `moveTo` (SPEC §20).
 */
export function PipelineEditor({ pipeline, pipelines, onDone, onCancel }) {
  const [name, setName] = useState(pipeline?.name ?? '');
  const [makeDefault, setMakeDefault] = useState(false);
  const [stages, setStages] = useState(() => (pipeline ? pipeline.stages.map(draftStage) : [draftStage()]));
  const [problem, setProblem] = useState(undefined);
  // A 409 with leadCount: which change it refused, and how many leads it would strand.
  const [pending, setPending] = useState(undefined);
  const [confirming, setConfirming] = useState(false);
  const [said, setSaid] = useState('');
  // After a stage moves or goes, where focus goes (the first of these selectors that finds a
  // control it can take): a keyboard user stays where they were.
  const [focusNext, setFocusNext] = useState(undefined);
  const [dragged, setDragged] = useState(undefined);
  const root = useRef(null);

  useEffect(() => root.current.querySelector('input[name="name"]').focus(), []);
  useLayoutEffect(() => {
    if (!focusNext) return;
    const found = [...focusNext, '.add-stage']
      .map((selector) => root.current.querySelector(selector))
      .find((element) => element && !element.disabled);
    found.focus();
  }, [focusNext]);

  const change = (id, fields) =>
    setStages((known) => known.map((stage) => (stage.id === id ? { ...stage, ...fields } : stage)));
  const relabel = (stage, label) => change(stage.id, stage.keyTyped ? { label } : { label, key: keyOf(label) });
  const place = (id, index) => {
    const from = stages.findIndex((stage) => stage.id === id);
    if (from < 0 || index < 0 || index >= stages.length || index === from) return;
    const next = stages.filter((stage) => stage.id !== id);
    next.splice(index, 0, stages[from]);
    setStages(next);
    setSaid(t('stageMoved', { label: stages[from].label, position: index + 1, total: stages.length }));
  };
  const step = (stage, by, action) => {
    place(stage.id, stages.indexOf(stage) + by);
    const other = action === 'up' ? 'down' : 'up';
    setFocusNext([
      `[data-stage="${stage.id}"] [data-action="${action}"]`,
      `[data-stage="${stage.id}"] [data-action="${other}"]`,
    ]);
  };
  const remove = (stage) => {
    const index = stages.indexOf(stage);
    const next = stages.filter((other) => other !== stage);
    setStages(next);
    setSaid(t('stageRemoved', { label: stage.label }));
    const neighbour = next[Math.min(index, next.length - 1)];
    setFocusNext([`[data-stage="${neighbour.id}"] [data-action="remove"]`]);
  };
  const add = () => {
    const stage = draftStage();
    setStages([...stages, stage]);
    setSaid(t('stageAdded'));
    setFocusNext([`[data-stage="${stage.id}"] input[name="label"]`]);
  };

  const send = async (action, moveTarget) => {
    setProblem(undefined);
    const query = moveTarget ? `?moveTo=${encodeURIComponent(moveTarget)}` : '';
    try {
      if (action === 'delete') {
        await api(`/pipelines/${pipeline.id}${query}`, { method: 'DELETE' });
        return onDone(t('pipelineDeleted'));
      }
      const body = { name, stages: stages.map(({ key, label, kind }) => ({ key, label, kind })) };
      if (makeDefault) body.default = true;
      if (pipeline) await api(`/pipelines/${pipeline.id}${query}`, { method: 'PUT', body });
      else await api('/pipelines', { method: 'POST', body });
      onDone(t('pipelineSaved'));
    } catch (failure) {
      if (failure.status === 409 && failure.body?.leadCount !== undefined) {
        setPending({ action, leadCount: failure.body.leadCount });
        return;
      }
      setPending(undefined);
      setProblem({ message: failure.message, details: failure.body?.details ?? [] });
    }
  };

  const title = pipeline ? t('editPipelineTitle', { name: pipeline.name }) : t('newPipeline');
  return html`
    <section class="details editor" ref=${root} aria-labelledby="editor-title">
      <h2 id="editor-title">${title}</h2>
      <form onSubmit=${(event) => {
        event.preventDefault();
        send('save');
      }}>
        <label class="field">${t('name')}
          <input name="name" required maxlength="100" value=${name} onInput=${(event) => setName(event.currentTarget.value)} />
        </label>
        <fieldset class="stages-editor">
          <legend>${t('stages')}</legend>
          <ol>
            ${stages.map(
              (stage, index) => html`<${StageRow} key=${stage.id} stage=${stage} index=${index} total=${stages.length}
                onLabel=${(label) => relabel(stage, label)}
                onKey=${(key) => change(stage.id, { key, keyTyped: true })}
                onKind=${(kind) => change(stage.id, { kind })}
                onUp=${() => step(stage, -1, 'up')} onDown=${() => step(stage, 1, 'down')} onRemove=${() => remove(stage)}
                onDragStart=${() => setDragged(stage.id)} onDragEnd=${() => setDragged(undefined)}
                onDrop=${() => {
                  if (dragged !== undefined) place(dragged, index);
                  setDragged(undefined);
                }} />`,
            )}
          </ol>
          <button type="button" class="secondary add-stage" onClick=${add}>${t('addStage')}</button>
        </fieldset>
        ${
          pipeline?.default
            ? html`<p class="help">${t('isDefault')}</p>`
            : html`<label class="check"><input type="checkbox" name="default" checked=${makeDefault}
                onChange=${(event) => setMakeDefault(event.currentTarget.checked)} /> ${t('makeDefault')}</label>`
        }
        <p class="visually-hidden" role="status" aria-live="polite">${said}</p>
        ${
          problem &&
          html`<div class="error" role="alert"><p>${problem.message}</p>
            <ul>${problem.details.map((detail) => html`<li>${detail.message}</li>`)}</ul></div>`
        }
        ${
          pending &&
          html`<${WhereTo} pending=${pending} pipeline=${pipeline} stages=${stages} pipelines=${pipelines}
            onMove=${(target) => send(pending.action, target)} onCancel=${() => setPending(undefined)} />`
        }
        <div class="actions">
          <button type="submit">${t('save')}</button>
          <button type="button" class="secondary" onClick=${onCancel}>${t('cancel')}</button>
          ${
            pipeline &&
            !pipeline.default &&
            html`<button type="button" class="danger" aria-expanded=${confirming} onClick=${() => setConfirming(!confirming)}>
              ${t('deletePipeline')}</button>`
          }
        </div>
        ${confirming && html`<${ConfirmDelete} name=${pipeline.name} onYes=${() => send('delete')} onNo=${() => setConfirming(false)} />`}
      </form>
    </section>`;
}

function StageRow({
  stage,
  index,
  total,
  onLabel,
  onKey,
  onKind,
  onUp,
  onDown,
  onRemove,
  onDragStart,
  onDragEnd,
  onDrop,
}) {
  return html`
    <li class="stage-row" data-stage=${stage.id} data-key=${stage.key}
      onDragOver=${(event) => event.preventDefault()}
      onDrop=${(event) => {
        event.preventDefault();
        onDrop();
      }}>
      <fieldset>
        <legend>${t('stageNumber', { position: index + 1 })}</legend>
        <span class="handle" draggable="true" aria-hidden="true" title=${t('dragToReorder')}
          onDragStart=${(event) => {
            event.dataTransfer.setData('text/plain', stage.label);
            event.dataTransfer.effectAllowed = 'move';
            onDragStart();
          }}
          onDragEnd=${onDragEnd}>⠿</span>
        <label>${t('stageLabel')}
          <input name="label" required maxlength="100" value=${stage.label} onInput=${(event) => onLabel(event.currentTarget.value)} />
        </label>
        <label>${t('stageKey')}
          ${
            stage.kept
              ? html`<input name="key" readonly value=${stage.key} />`
              : html`<input name="key" required pattern=${NEW_KEY} maxlength="40" value=${stage.key}
                  onInput=${(event) => onKey(event.currentTarget.value)} />`
          }
        </label>
        <label>${t('stageKind')}
          <select name="kind" value=${stage.kind} onChange=${(event) => onKind(event.currentTarget.value)}>
            ${KINDS.map((kind) => html`<option value=${kind}>${t(`kind_${kind}`)}</option>`)}
          </select>
        </label>
        <div class="stage-actions">
          <button type="button" class="secondary" data-action="up" disabled=${index === 0} onClick=${onUp}>${t('moveUp')}</button>
          <button type="button" class="secondary" data-action="down" disabled=${index === total - 1} onClick=${onDown}>${t('moveDown')}</button>
          <button type="button" class="secondary" data-action="remove" disabled=${total === 1} onClick=${onRemove}>${t('removeStage')}</button>
        </div>
      </fieldset>
    </li>`;
}

/**
 * Where the leads of what is removed go: a stage that remains in this pipeline (when saving), or a
 * stage of another pipeline, as `<pipeline id>:<stage key>`.
 */
function WhereTo({ pending, pipeline, stages, pipelines, onMove, onCancel }) {
  const others = pipelines.filter((other) => other.id !== pipeline.id);
  const here = pending.action === 'save' ? stages.filter((stage) => stage.key) : [];
  const first = here[0] ? here[0].key : others[0] && `${others[0].id}:${others[0].stages[0].key}`;
  const [target, setTarget] = useState(first ?? '');
  const select = useRef(null);
  useEffect(() => select.current.focus(), [pending]);
  return html`
    <fieldset class="where-to">
      <legend>${t('whereTo')}</legend>
      <p>${t(pending.action === 'save' ? 'leadsInRemoved' : 'leadsInPipeline', { count: pending.leadCount })}</p>
      <label>${t('moveLeadsTo')}
        <select name="moveTo" ref=${select} value=${target} onChange=${(event) => setTarget(event.currentTarget.value)}>
          ${
            here.length > 0 &&
            html`<optgroup label=${pipeline.name}>
              ${here.map((stage) => html`<option value=${stage.key}>${stage.label}</option>`)}
            </optgroup>`
          }
          ${others.map(
            (other) => html`<optgroup label=${pipelineName(other)}>
              ${other.stages.map((stage) => html`<option value=${`${other.id}:${stage.key}`}>${stage.label}</option>`)}
            </optgroup>`,
          )}
        </select>
      </label>
      <button type="button" disabled=${!target} onClick=${() => onMove(target)}>
        ${t(pending.action === 'save' ? 'moveAndSave' : 'moveAndDelete')}</button>
      <button type="button" class="secondary" onClick=${onCancel}>${t('cancel')}</button>
    </fieldset>`;
}

function ConfirmDelete({ name, onYes, onNo }) {
  const yes = useRef(null);
  useEffect(() => yes.current.focus(), []);
  return html`
    <div class="confirm" role="group" aria-labelledby="confirm-delete">
      <p id="confirm-delete">${t('confirmDelete', { name })}</p>
      <button type="button" class="danger" ref=${yes} onClick=${onYes}>${t('yesDelete')}</button>
      <button type="button" class="secondary" onClick=${onNo}>${t('cancel')}</button>
    </div>`;
}
