import { type Static, Type } from 'typebox';
import {
  commaValues,
  customFilterParameters,
  customFilters,
  listQueryFields,
  parseSort,
} from '../records/list-query.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { TrimmedString } from '../shared/schemas.js';
import type { LeadFilters, LeadSortField } from './lead.repository.js';

export const LEAD_SORT_FIELDS = ['createdAt', 'updatedAt', 'name', 'score', 'lastContact'] as const;

export const LeadListQuery = Type.Object(
  {
    ...listQueryFields(LEAD_SORT_FIELDS, 'new,qualified'),
    source: Type.Optional(TrimmedString({ minLength: 1, maxLength: 100, description: 'Exact source.' })),
    scoreMin: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'Score at least (inclusive).' })),
    scoreMax: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'Score at most (inclusive).' })),
    pipeline: Type.Optional(
      Type.String({ format: 'uuid', description: 'Only leads of this pipeline; `status` then names its stages.' }),
    ),
  },
  { additionalProperties: false, ...customFilterParameters },
);
export type LeadListQuery = Static<typeof LeadListQuery>;

/**
 * The validated query string as filters and a sort; what the schema cannot say is checked here,
 * but for the stages of the tenant's pipelines, which LeadService.list checks.
 */
export function leadListRequest(query: LeadListQuery) {
  if (query.scoreMin !== undefined && query.scoreMax !== undefined && query.scoreMin > query.scoreMax) {
    throw validationFailed([
      { field: 'scoreMin', message: fieldMessage('scoreMin', fieldMessages.maximum(query.scoreMax)) },
    ]);
  }
  const filters: LeadFilters = {
    statuses: commaValues(query.status),
    pipeline: query.pipeline,
    source: query.source,
    email: query.email,
    externalId: query.externalId,
    q: query.q,
    updatedSince: query.updatedSince,
    createdSince: query.createdSince,
    scoreMin: query.scoreMin,
    scoreMax: query.scoreMax,
    custom: customFilters(query),
  };
  return { sort: parseSort<LeadSortField>(query.sort), filters, limit: query.limit ?? 100 };
}
