import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyPluginAsync } from 'fastify';
import { reopenFailedDeliveries } from '@notify/db';
import { QUEUE_NAMES, sendJobDeliveries } from '@notify/queues';
import type { AppDeps } from '../../deps';

export const QUEUES_PATH = '/admin/queues';

const RETRY_JOB = '/api/queues/:queueName/:jobId/retry';
const RETRY_ALL = '/api/queues/:queueName/retry/:queueStatus';

/**
 * bull-board over every queue (the 21 `match.<scope>` queues, `deliver`, `send`) at
 * /admin/queues. Register it inside a scope that checks the operator session. Its assets are
 * served from @bull-board/ui's own files; the one outside stylesheet (a web font) is left out.
 */
export const queuesDashboard: FastifyPluginAsync<{ deps: AppDeps }> = async (scope, { deps }) => {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUES_PATH);

  // Retrying a failed send job must also reopen its deliveries: the send stage only claims pending
  // deliveries, so a job retried alone would find them failed and do nothing. Only failed ones
  // reopen: those of its batch that were sent stay sent.
  const reopenDeliveries = async (params: Record<string, string | undefined>, route: string) => {
    if (params.queueName !== QUEUE_NAMES.send) return;
    const ids: string[] = [];
    if (route === RETRY_JOB && params.jobId) {
      const job = await deps.queues.send.getJob(params.jobId);
      if (job?.data && (await job.getState()) === 'failed') ids.push(...sendJobDeliveries(job.data));
    } else if (route === RETRY_ALL && params.queueStatus === 'failed') {
      for (let start = 0; ; start += 500) {
        const jobs = await deps.queues.send.getFailed(start, start + 499);
        ids.push(...jobs.flatMap((job) => (job?.data ? sendJobDeliveries(job.data) : [])));
        if (jobs.length < 500) break;
      }
    }
    if (ids.length) await reopenFailedDeliveries(deps.db, ids);
  };

  createBullBoard({
    queues: deps.queues.all().map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'Notify queues',
        hideDocsLink: true,
        miscLinks: [{ text: 'Operator console', url: '/admin/console' }],
      },
      handlerHooks: {
        before: async ({ route, request }) => {
          await reopenDeliveries((request?.params ?? {}) as Record<string, string | undefined>, route);
        },
      },
    },
  });

  scope.addHook('onSend', async (_request, reply, payload) => {
    if (typeof payload === 'string' && String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
      return payload.replace(/<link[^>]*fonts\.googleapis\.com[^>]*>/g, '');
    }
    return payload;
  });
  await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUES_PATH });
};
