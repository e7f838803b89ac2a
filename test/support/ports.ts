import { createServer } from 'node:net';

/**
 * Linux hands out ephemeral ports (the local end of outgoing connections) from 32768 up: a port
 * chosen below that cannot be taken by a client socket between this check and its server's start,
 * nor while a server killed by a test is down before it starts again on the same port.
 */
const LOWEST = 10_000;
const EPHEMERAL_FROM = 32_768;

/** Ports handed out by this process: each is free only until its server starts, which may be after the next is chosen. */
const handedOut = new Set<number>();

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
      .once('error', () => resolve(false))
      .listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port nobody listens on now, nor was handed out before. With `alsoFree`, the ports
 * that far above it are free too, and held with it (a Redis Cluster node's bus port is its own
 * port + 10000).
 */
export async function freePort(options: { alsoFree?: number[] } = {}): Promise<number> {
  const offsets = [0, ...(options.alsoFree ?? [])];
  const span = EPHEMERAL_FROM - LOWEST - Math.max(...offsets);
  for (;;) {
    const port = LOWEST + Math.floor(Math.random() * span);
    const ports = offsets.map((offset) => port + offset);
    if (ports.some((candidate) => handedOut.has(candidate))) continue;
    let free = true;
    for (const candidate of ports) if (free) free = await listenable(candidate);
    if (!free) continue;
    for (const candidate of ports) handedOut.add(candidate);
    return port;
  }
}
