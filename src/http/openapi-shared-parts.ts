/**
 * The parts every answer of the document repeats, written once under `components` and referred to
 * by `$ref`: the SPEC §2 error body (the same schema under some 450 answers) and the headers every
 * answer carries. Inline, they made the external document 958 KB, which Swagger UI at /docs took
 * seconds of one task to draw; the document means the same with them shared.
 */
export function withSharedAnswerParts(document: unknown): unknown {
  const { paths, components } = document as {
    paths?: Record<string, Record<string, { responses?: Record<string, Answer> }>>;
    components?: { schemas?: Record<string, unknown>; headers?: Record<string, unknown> };
  };
  if (!paths || !components) return document;
  const answers = Object.values(paths).flatMap((operations) =>
    Object.values(operations).flatMap((operation) => Object.entries(operation.responses ?? {})),
  );

  const errorBodies = answers
    .filter(([status]) => Number(status) >= 400)
    .map(([, answer]) => [answer, answer.content?.['application/json']] as const)
    .filter((pair): pair is readonly [Answer, Media & { schema: object }] => pair[1]?.schema !== undefined);
  // Each error body repeats its answer's description (what the status means here); the answer says it.
  for (const [answer, media] of errorBodies) {
    const { description, ...schema } = media.schema as { description?: string };
    if (description === answer.description) media.schema = schema;
  }
  const errorBody = mostRepeated(errorBodies.map(([, media]) => media.schema));
  if (errorBody) {
    components.schemas = { ...components.schemas, Error: JSON.parse(errorBody) };
    for (const [, media] of errorBodies) {
      if (JSON.stringify(media.schema) === errorBody) media.schema = { $ref: '#/components/schemas/Error' };
    }
  }

  // Each header by its name, and by `Name.optional` where some answers may lack one others always carry.
  const headers = answers.flatMap(([, answer]) =>
    Object.entries(answer.headers ?? {}).map(([name, header]) => ({ answer, name, json: JSON.stringify(header) })),
  );
  const shared: Record<string, unknown> = {};
  for (const name of new Set(headers.map((header) => header.name))) {
    const variants = new Map<string, Answer[]>();
    for (const header of headers.filter((other) => other.name === name)) {
      variants.set(header.json, [...(variants.get(header.json) ?? []), header.answer]);
    }
    const always = [...variants.keys()].some((json) => (JSON.parse(json) as { required?: boolean }).required);
    for (const [json, carriers] of variants) {
      const key = always && !(JSON.parse(json) as { required?: boolean }).required ? `${name}.optional` : name;
      if (carriers.length < 2 || key in shared) continue;
      shared[key] = JSON.parse(json);
      for (const answer of carriers)
        (answer.headers as Record<string, unknown>)[name] = { $ref: `#/components/headers/${key}` };
    }
  }
  if (Object.keys(shared).length > 0) components.headers = { ...components.headers, ...shared };
  return document;
}

interface Media {
  schema?: unknown;
}

interface Answer {
  description?: string;
  content?: Record<string, Media>;
  headers?: Record<string, unknown>;
}

/** The JSON of the value met most often among `values`, if it is met more than once. */
function mostRepeated(values: readonly unknown[]): string | undefined {
  const counts = new Map<string, number>();
  for (const value of values) {
    const json = JSON.stringify(value);
    counts.set(json, (counts.get(json) ?? 0) + 1);
  }
  let best: [string, number] | undefined;
  for (const entry of counts) if (!best || entry[1] > best[1]) best = entry;
  return best && best[1] > 1 ? best[0] : undefined;
}
