import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = SerializerSelector.SerializerFactory;
type Serializer = SerializerSelector.Serializer;

const fastifyDefault = SerializerSelector();
/** Per external schemas and options (as JSON), the serializers made, by their schema as JSON. */
const made = new Map<string, Map<string, Serializer>>();

/**
 * Fastify's own serializer factory (fast-json-stringify), remembering for the process what it
 * makes: a response schema is turned into code once, however many apps the process builds (one in
 * production; a test file builds one per backend and per instance, and each build compiled every
 * route's answers again). Keyed by the schema's JSON, since routes build their schema objects
 * afresh for each app.
 */
export const cachedSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = fastifyDefault(externalSchemas, options);
  const context = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let serializers = made.get(context);
  if (!serializers) {
    serializers = new Map();
    made.set(context, serializers);
  }
  const known = serializers;
  return (route) => {
    const key = JSON.stringify(route.schema ?? null);
    let serializer = known.get(key);
    if (!serializer) {
      serializer = compile(route);
      known.set(key, serializer);
    }
    return serializer;
  };
};
