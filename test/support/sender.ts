import type { ClaimedDelivery } from '@notify/db';
import type { SendHere } from '@notify/pipeline';

/**
 * A process's sender (SendHere) that has `room` and takes everything it is handed, recording each
 * handing: the deliveries, in order, and which of them came claimed by the statement that made them.
 */
export function recordingSender(room: number): { sendHere: SendHere; handed: Array<{ ids: string[]; claimed: string[] }> } {
  const handed: Array<{ ids: string[]; claimed: string[] }> = [];
  const sendHere: SendHere = {
    take: (ids: readonly string[], claimed?: ReadonlyMap<string, ClaimedDelivery>) => {
      handed.push({ ids: [...ids], claimed: [...(claimed?.keys() ?? [])] });
      return [];
    },
    room: () => room,
  };
  return { sendHere, handed };
}
