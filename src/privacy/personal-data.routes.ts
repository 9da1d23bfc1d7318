import type { FastifyPluginAsync } from 'fastify';
import type { TSchema } from 'typebox';
import { actorOf, principalOf } from '../http/authenticate.js';
import { setNextPage } from '../http/next-page.js';
import { answer, errorResponses } from '../http/schemas.js';
import { ErasureAnswer, ErasureRequest, PersonalDataQuery, personalDataAnswer } from './personal-data.schemas.js';
import type { PersonalDataService } from './personal-data.service.js';

interface PersonalDataRoutesOptions {
  personalData: PersonalDataService;
  /** The records and events the answer holds, as this deployment shows them. */
  schemas: { Lead: TSchema; Customer: TSchema; EventList: TSchema };
}

const tags = ['personal data'];

/** SPEC §17: what a tenant holds about a person, and its erasure (LGPD art. 18, GDPR art. 15 and 17). */
export const personalDataRoutes: FastifyPluginAsync<PersonalDataRoutesOptions> = async (
  app,
  { personalData: service, schemas: { Lead, Customer, EventList } },
) => {
  app.get(
    '/personal-data',
    {
      schema: {
        operationId: 'getPersonalData',
        summary: 'Everything the tenant holds about an e-mail address',
        description:
          "For a person's access request (LGPD art. 18, GDPR art. 15): the leads and customers with this e-mail and " +
          'their history. The history comes in pages, as the change feed does: while more events follow, the answer ' +
          'carries `Link: <next page URL>; rel="next"` and `X-Next-Cursor` (the `after` of the next page); every page ' +
          'holds all the leads and customers. An `after` whose events retention has removed is a 410 `cursor_expired`.',
        tags,
        querystring: PersonalDataQuery,
        response: {
          200: answer(personalDataAnswer(Lead, Customer, EventList), 'What the tenant holds about the person.'),
          ...errorResponses(400, 403, 410),
        },
      },
      config: { scope: 'privacy:read' },
    },
    async (request, reply) => {
      const { email, after, limit = 100 } = request.query as PersonalDataQuery;
      const { data, more } = await service.access(request.db, principalOf(request).tenantId, email, { after, limit });
      const last = data.events.at(-1);
      if (more && last) setNextPage(request, reply, last.id, 'after');
      return data;
    },
  );

  app.post(
    '/personal-data/erase',
    {
      schema: {
        operationId: 'erasePersonalData',
        summary: 'Erase everything the tenant holds about an e-mail address',
        description:
          "For a person's erasure request (LGPD art. 18, GDPR art. 17): deletes the leads and customers with this " +
          'e-mail, each with a `*.deleted` event that holds only its id and `reason: "erasure"` (webhooks tell the ' +
          'subscribers); redacts the earlier events of those records and of any record that held the e-mail (only the ' +
          'record id stays, `redacted: true`), the stored payloads of their webhook deliveries, and the answers kept ' +
          'for Idempotency-Key replays that show them. Repeating it is harmless (zeros).',
        tags,
        body: ErasureRequest,
        response: { 200: answer(ErasureAnswer, 'What was erased.'), ...errorResponses(400, 403, 413, 415) },
      },
      config: { scope: 'privacy:write' },
    },
    async (request) => {
      const { email } = request.body as { email: string };
      return service.erase(request.db, actorOf(request), email);
    },
  );
};
