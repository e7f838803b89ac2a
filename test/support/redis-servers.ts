import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { vi } from 'vitest';
import { freePort } from './ports';

// Redis topologies for tests, on loopback ports: a Cluster (startRedisCluster) and a master
// watched by Sentinel (startRedisSentinel).

/**
 * A real Redis Cluster on loopback ports for tests: `masters` masters with one replica each,
 * made with `redis-server --cluster-enabled yes` and `redis-cli --cluster create`, nothing kept on
 * disk. A node is stopped by its process (SIGKILL), as a lost machine would be.
 */
export interface RedisClusterHandle {
  /** `host:port,...` of every node, for REDIS_CLUSTER_NODES. */
  readonly nodes: string;
  readonly ports: number[];
  /** The hash slot of `key`. */
  slotOf(key: string): Promise<number>;
  /** The port of the master serving the slot of `key`. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the node on `port` and waits until its slots are served by a promoted replica. */
  killMaster(port: number): Promise<void>;
  stop(): Promise<void>;
}

export function redisClusterAvailable(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  // vi.waitFor: the cluster starts in beforeAll, where expect.poll refuses to run.
  await vi.waitFor(
    async () => {
      if (!(await check().catch(() => false))) throw new Error(`Redis Cluster: ${what} within ${timeoutMs} ms`);
    },
    { timeout: timeoutMs, interval: 100 },
  );
}

async function ask<T>(port: number, command: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // A node that is down answers with a rejected connect; the event would be reported as unhandled.
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await command(redis);
  } finally {
    redis.disconnect();
  }
}

/** `CLUSTER NODES` as (port, role, slots) of the masters that are up. */
async function mastersSeenBy(port: number): Promise<Array<{ port: number; slots: string[] }>> {
  const text = (await ask(port, (redis) => redis.cluster('NODES'))) as string;
  return text
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2]!.includes('master') && !fields[2]!.includes('fail'))
    .map((fields) => ({ port: Number(/:(\d+)@/.exec(fields[1]!)![1]), slots: fields.slice(8) }));
}

/** The port of the replica of the master on `port`. */
async function replicaOf(port: number): Promise<number> {
  const lines = ((await ask(port, (redis) => redis.cluster('NODES'))) as string).trim().split('\n').map((line) => line.split(' '));
  const id = lines.find((fields) => fields[2]!.includes('myself'))![0];
  const replica = lines.find((fields) => fields[2]!.includes('slave') && fields[3] === id);
  if (!replica) throw new Error(`${port} has no replica`);
  return Number(/:(\d+)@/.exec(replica[1]!)![1]);
}

function inSlots(slot: number, ranges: string[]): boolean {
  return ranges.some((range) => {
    const [from, to] = range.split('-').map(Number);
    return slot >= from! && slot <= (to ?? from)!;
  });
}

export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-cluster-'));
  const ports: number[] = [];
  // Each node's cluster bus port (+10000) must be free too.
  for (let i = 0; i < masters * 2; i++) ports.push(await freePort({ alsoFree: [10_000] }));
  const processes = new Map<number, ChildProcess>();
  for (const port of ports) {
    const child = spawn('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
      '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '1000',
      // A replica always stands for election, however long since it last heard its master (a loaded machine).
      '--cluster-replica-validity-factor', '0',
      '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', join(dir, `${port}.log`),
    ], { stdio: 'ignore' });
    processes.set(port, child);
  }
  const stop = async () => {
    for (const child of processes.values()) child.kill('SIGKILL');
    processes.clear();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await until(`node ${port} answered`, async () => (await ask(port, (redis) => redis.ping())) === 'PONG');
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const port of ports) {
      await until(`node ${port} saw the cluster ok`, async () => /cluster_state:ok/.test((await ask(port, (redis) => redis.cluster('INFO'))) as string));
    }
    // Every master has its replica attached before anything relies on a failover.
    await until('replicas attached', async () => {
      const text = (await ask(ports[0]!, (redis) => redis.cluster('NODES'))) as string;
      return text.split('\n').filter((line) => line.includes(' slave ') && line.includes(' connected')).length === masters;
    });
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    nodes: ports.map((port) => `127.0.0.1:${port}`).join(','),
    ports,
    async slotOf(key) {
      return Number(await ask(ports.find((port) => processes.has(port))!, (redis) => redis.cluster('KEYSLOT', key)));
    },
    async masterOf(key) {
      const slot = await ask(ports.find((port) => processes.has(port))!, (redis) => redis.cluster('KEYSLOT', key));
      const owner = (await mastersSeenBy(ports.find((port) => processes.has(port))!)).find((master) => inSlots(Number(slot), master.slots));
      if (!owner) throw new Error(`no master serves slot ${slot}`);
      return owner.port;
    },
    async killMaster(port) {
      const killed = (await mastersSeenBy(port)).find((master) => master.port === port);
      if (!killed) throw new Error(`${port} is not a master`);
      const replica = await replicaOf(port);
      processes.get(port)?.kill('SIGKILL');
      processes.delete(port);
      const survivor = ports.find((other) => processes.has(other))!;
      // Promoted: another master serves the killed one's slots, and the cluster says it is ok.
      const tookOver = async () => {
        const slot = Number(killed.slots[0]!.split('-')[0]);
        const owner = (await mastersSeenBy(survivor)).find((master) => inSlots(slot, master.slots));
        const info = (await ask(survivor, (redis) => redis.cluster('INFO'))) as string;
        return owner !== undefined && owner.port !== port && /cluster_state:ok/.test(info);
      };
      // An election normally ends within seconds; on a machine too loaded for its votes to arrive in
      // time, the replica takes over without them, as an operator would: the clients see the same failover.
      try {
        await until('a replica was elected', tookOver, 15_000);
      } catch {
        await ask(replica, (redis) => redis.cluster('FAILOVER', 'TAKEOVER'));
        await until('a replica took over', tookOver);
      }
    },
    stop,
  };
}

/** One Redis master watched by one Sentinel (`redis-server --sentinel`), on loopback ports. */
export interface RedisSentinelHandle {
  /** `host:port` of the sentinel, for REDIS_SENTINELS. */
  readonly sentinels: string;
  readonly masterName: string;
  stop(): Promise<void>;
}

export async function startRedisSentinel(masterName = 'notify-test'): Promise<RedisSentinelHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-sentinel-'));
  const masterPort = await freePort();
  const sentinelPort = await freePort();
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    children.push(spawn('redis-server', ['--port', String(masterPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' }));
    await until('the master answered', async () => (await ask(masterPort, (redis) => redis.ping())) === 'PONG');
    // Sentinel rewrites its configuration file, so it gets one of its own.
    const config = join(dir, 'sentinel.conf');
    writeFileSync(config, `port ${sentinelPort}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor ${masterName} 127.0.0.1 ${masterPort} 1\n`);
    children.push(spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' }));
    await until('the sentinel knew the master', async () => {
      const answer = (await ask(sentinelPort, (redis) => redis.call('SENTINEL', 'get-master-addr-by-name', masterName))) as string[] | null;
      return answer?.[1] === String(masterPort);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { sentinels: `127.0.0.1:${sentinelPort}`, masterName, stop };
}
