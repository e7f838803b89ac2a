import { parseIngestRequest, type Scope, type Severity } from '@notify/core';
import { ingestEvents, type IngestContext, type IngestResult } from './ingest-events';

/**
 * An event as platform code hands it over: the envelope of product decisions §5 in camelCase,
 * optional fields optional. An IncomingEvent is one too.
 */
export interface EventInput {
  id: string;
  organizationId: string;
  scope: Scope;
  /** A Date, or an ISO 8601 string as scanners send it. */
  occurredAt: Date | string;
  asset: string;
  assetType?: string | null;
  severity?: Severity | null;
  tags?: readonly string[] | null;
  title: string;
  summary?: string | null;
  url?: string | null;
  data?: Record<string, unknown> | null;
}

export interface EventPublisher {
  /**
   * Validates and stores one event or a batch (up to 1,000), then hands the new ones to matching:
   * the same rules and guarantees as `POST /v1/ingest/events`. Throws ValidationFailed
   * (nothing stored) when any event is invalid or names an unknown organization.
   */
  publish(events: EventInput | readonly EventInput[]): Promise<IngestResult>;
}

/** The wire shape of one event, so the one validator checks in-platform events as it checks scanners'. */
function toWire(event: EventInput): unknown {
  // Plain JavaScript callers can pass anything: what is not an object goes to the validator as it is.
  if (typeof event !== 'object' || event === null) return event;
  const occurredAt = event.occurredAt instanceof Date
    ? (Number.isNaN(event.occurredAt.getTime()) ? 'Invalid Date' : event.occurredAt.toISOString())
    : event.occurredAt;
  return {
    id: event.id,
    organization_id: event.organizationId,
    scope: event.scope,
    occurred_at: occurredAt,
    asset: event.asset,
    asset_type: event.assetType,
    severity: event.severity,
    tags: event.tags,
    title: event.title,
    summary: event.summary,
    url: event.url,
    data: event.data,
  };
}

/**
 * The in-platform way to raise events (a platform job that finds a new asset, say).
 *
 * It takes camelCase EventInput, not the wire shape: platform code is TypeScript and gets its
 * fields checked by the compiler. Each event is translated to the wire shape and validated by the
 * same core validator as the HTTP route, so both paths accept exactly the same events; errors
 * name the wire fields (`events[2].occurred_at` for an array, `occurred_at` for one event).
 */
export function createEventPublisher(ctx: IngestContext): EventPublisher {
  return {
    async publish(input) {
      const body = Array.isArray(input) ? { events: (input as readonly EventInput[]).map(toWire) } : toWire(input as EventInput);
      const { shape, events } = parseIngestRequest(body);
      return ingestEvents(ctx, events, { shape });
    },
  };
}
