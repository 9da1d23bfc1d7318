import { api } from './api.js';
import { t } from './i18n.js';
import { html, useEffect, useState } from './vendor/preact.js';

/**
 * The pipeline last chosen on the board or the funnel, while this tab's console lives: a person
 * going from one to the other keeps looking at the same pipeline.
 */
let remembered;

/**
 * The tenant's pipelines (SPEC §20) and the one chosen: the person's last choice, else the
 * default. `chosen` is undefined until they have come.
 */
export function usePipelines() {
  const [pipelines, setPipelines] = useState(undefined);
  const [chosenId, setChosenId] = useState(remembered);
  const [error, setError] = useState('');
  useEffect(() => {
    api('/pipelines')
      .then(({ body }) => setPipelines(body))
      .catch((failure) => setError(failure.message));
  }, []);
  const chosen =
    pipelines &&
    (pipelines.find((pipeline) => pipeline.id === chosenId) ??
      pipelines.find((pipeline) => pipeline.default) ??
      pipelines[0]);
  const choose = (id) => {
    remembered = id;
    setChosenId(id);
  };
  return { pipelines, chosen, choose, error };
}

/** What a person sees of a pipeline in a list: its name, and whether it is the default. */
export function pipelineName(pipeline) {
  return pipeline.default ? `${pipeline.name} (${t('defaultPipeline')})` : pipeline.name;
}

/**
 * A labelled select of the pipelines; `anyLabel`, when given, is a first option (value '') for
 * all of them.
 */
export function PipelinePicker({ pipelines, value, onChoose, anyLabel }) {
  return html`<label>${t('pipeline')}
    <select name="pipeline" value=${value} onChange=${(event) => onChoose(event.currentTarget.value)}>
      ${anyLabel && html`<option value="">${anyLabel}</option>`}
      ${pipelines.map((pipeline) => html`<option key=${pipeline.id} value=${pipeline.id}>${pipelineName(pipeline)}</option>`)}
    </select>
  </label>`;
}

/** The label of stage `key` in `pipeline`, or the key itself for a status no stage has now. */
export function stageLabel(pipeline, key) {
  return pipeline?.stages.find((stage) => stage.key === key)?.label ?? key;
}
