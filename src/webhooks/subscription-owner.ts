import type { Db } from '../db/database.js';
import type { WebhookRepository } from './webhook.repository.js';
import { webhookEntry } from './webhook-entries.js';

/** The `pausedReason` of a subscription whose creating token was revoked or expired (SPEC §15). */
export const TOKEN_REVOKED = 'token_revoked';

/**
 * SPEC §15: a subscription delivers on its creating token's authority; once that token is revoked
 * or expires, the subscription is paused, with an entry in its log saying why. A token allowed to
 * turn it on again becomes its owner (WebhookService.update).
 */
export async function pauseForOwner(
  db: Db,
  webhooks: WebhookRepository,
  subscription: { id: string; tenantId: string },
) {
  if (await webhooks.disable(db, subscription.id, TOKEN_REVOKED)) {
    await webhooks.insertDeliveries(db, [
      webhookEntry.disabled({
        tenantId: subscription.tenantId,
        subscriptionId: subscription.id,
        reason: TOKEN_REVOKED,
      }),
    ]);
  }
}

/** Pauses every active subscription `tokenId` created (it was just revoked), in the transaction `trx`. */
export async function pauseSubscriptionsOf(trx: Db, webhooks: WebhookRepository, tokenId: string): Promise<void> {
  for (const subscription of await webhooks.activeOwnedBy(trx, tokenId))
    await pauseForOwner(trx, webhooks, subscription);
}
