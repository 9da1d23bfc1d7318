import type { Actor } from '../auth/caller.js';
import type { Db } from '../db/database.js';
import type { ExpectedVersions } from '../db/precondition.js';
import { inTransaction } from '../db/transaction.js';
import type { EventFamily } from '../events/change-events.js';
import type { MergeInput } from '../records/merge-plan.js';
import type { Merged, RecordService } from '../records/record.service.js';
import { mergeRepository } from '../records/record-merge.js';
import { conflict, forbidden, mergeExpired, notFound } from '../shared/errors.js';
import type { Text } from '../shared/messages.js';

const texts = {
  notFound: { pt: 'Mescla não encontrada.', en: 'Merge not found.' },
  undoneAlready: { pt: 'Esta mescla já foi desfeita.', en: 'This merge was undone already.' },
  expired: (days: number) => ({
    pt: `Esta mescla tem mais de ${days} dias: seus eventos já foram apagados e ela não pode mais ser desfeita.`,
    en: `This merge is older than ${days} days: its events are gone, and it can no longer be undone.`,
  }),
  scopes: (scopes: string) => ({
    pt: `Desfazer esta mescla requer os escopos ${scopes}.`,
    en: `Undoing this merge needs the scopes ${scopes}.`,
  }),
} satisfies Record<string, Text | ((...args: never[]) => Text)>;

// biome-ignore lint/suspicious/noExplicitAny: leads and customers, whatever their field tables.
type AnyRecordService = RecordService<any, any>;

/** Each resource that merges, and the scopes its merges and undos need (SPEC §21: read and write). */
export interface MergingResource {
  readonly service: AnyRecordService;
  readonly scopes: readonly string[];
}

/** SPEC §21: merges of leads and customers, and their undo, while their events are kept. */
export class MergeService {
  constructor(
    private readonly resources: Readonly<Record<EventFamily, MergingResource>>,
    /** FUNIL_EVENT_RETENTION_DAYS: a merge is undone from its events' time, not after. */
    private readonly retentionDays: number,
  ) {}

  merge(
    family: EventFamily,
    handle: Db,
    actor: Actor,
    input: MergeInput,
    expected: ExpectedVersions | undefined,
  ): Promise<Merged<unknown>> {
    return this.resources[family].service.merge(handle, actor, input, expected);
  }

  undo(handle: Db, actor: Actor & { scopes: ReadonlySet<string> }, id: string, force: boolean) {
    return inTransaction(handle, async (trx) => {
      const merge = await mergeRepository.lock(trx, actor.tenantId, id);
      if (!merge) throw notFound(texts.notFound);
      const resource = this.resources[merge.resource];
      const lacking = resource.scopes.filter((scope) => !actor.scopes.has(scope));
      if (lacking.length > 0) throw forbidden(texts.scopes(resource.scopes.join(', ')));
      if (merge.undoneAt) throw conflict(texts.undoneAlready);
      if (merge.createdAt.getTime() < Date.now() - this.retentionDays * 86_400_000) {
        throw mergeExpired(texts.expired(this.retentionDays));
      }
      await resource.service.unmerge(trx, actor, merge, force);
      await mergeRepository.markUndone(trx, actor.tenantId, id);
      return { mergeId: merge.id, targetId: merge.targetId, restoredIds: merge.sourceIds };
    });
  }
}
