import type { EventDetails } from '@notify/core';
import type { DeliveryEvent } from '@notify/db';

/** An event as the database hands it to an e-mail, as the renderer reads it. */
export function mailEventOf(event: DeliveryEvent): EventDetails {
  return {
    id: event.id,
    scope: event.scope,
    occurredAt: new Date(event.occurred_at),
    asset: event.asset,
    assetType: event.asset_type,
    severity: event.severity,
    tags: event.tags ?? [],
    title: event.title,
    summary: event.summary,
    url: event.url,
    data: event.data,
  };
}
