import type { ClaimedDelivery } from '@notify/db';
import { createLogger } from '@notify/observability';
import { SendInProcess, type PipelineResources, type SendStage, type ToSend } from '@notify/pipeline';

/**
 * This process's send stage as the stages that make deliveries see it (the sendInProcess and
 * claimWhenMade fast paths, SendInProcess), with `room` and taking everything it is handed,
 * recording each handing: the deliveries, in order, and which of them came claimed by the
 * statement that made them.
 */
class RecordingSender extends SendInProcess {
  readonly handed: Array<{ ids: string[]; claimed: string[] }> = [];

  constructor(resources: Pick<PipelineResources, 'db' | 'queues'>, private readonly fixedRoom: number) {
    super(resources, {} as SendStage, { claimWhenMade: true, log: createLogger({ level: 'silent' }) });
  }

  override room(): number {
    return this.fixedRoom;
  }

  protected override take(ids: readonly string[], claimed?: ReadonlyMap<string, ClaimedDelivery>): string[] {
    this.handed.push({ ids: [...ids], claimed: [...(claimed?.keys() ?? [])] });
    return [];
  }
}

export function recordingSender(resources: Pick<PipelineResources, 'db' | 'queues'>, room: number): { toSend: ToSend; handed: Array<{ ids: string[]; claimed: string[] }> } {
  const sender = new RecordingSender(resources, room);
  return { toSend: sender, handed: sender.handed };
}
