import { parseIngestRequest, toWireEvent, type EventInput } from '@notify/core';
import type { IngestResult, IngestStage } from './ingest-stage';

export interface EventPublisher {
  /**
   * Validates and stores one event or a batch (up to 1,000), then hands the new ones to matching:
   * the same rules and guarantees as `POST /v1/ingest/events`. Throws ValidationFailed
   * (nothing stored) when any event is invalid or names an unknown organization.
   */
  publish(events: EventInput | readonly EventInput[]): Promise<IngestResult>;
}

/**
 * The in-platform way to raise events (a platform job that finds a new asset, say).
 *
 * It takes camelCase EventInput, not the wire shape: platform code is TypeScript and gets its
 * fields checked by the compiler. Each event is translated to the wire shape and validated by the
 * same core validator as the HTTP route, so both paths accept exactly the same events; errors
 * name the wire fields (`events[2].occurred_at` for an array, `occurred_at` for one event).
 */
export function createEventPublisher(ingest: IngestStage): EventPublisher {
  return {
    async publish(input) {
      const body = Array.isArray(input) ? { events: (input as readonly EventInput[]).map(toWireEvent) } : toWireEvent(input as EventInput);
      const { shape, events } = parseIngestRequest(body);
      return ingest.ingest(events, { shape });
    },
  };
}
