import { once } from 'node:events';
import net from 'node:net';

/**
 * A TCP relay in front of a service (PostgreSQL, Redis, SMTP) that can be cut and restored on
 * the same port: the service going away, as the processes using it see it. Cutting resets every
 * open connection and refuses new ones; restoring listens again.
 */
export interface TcpRelay {
  port: number;
  /** Whether the relay passes connections on. */
  readonly up: boolean;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = async () => {
    if (server?.listening) return;
    server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      sockets.add(client).add(upstream);
      for (const socket of [client, upstream]) {
        socket.on('error', () => {});
        socket.on('close', () => {
          sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as net.AddressInfo).port;
  };
  const cut = async () => {
    if (!server?.listening) return;
    const closed = new Promise((resolve) => server!.close(resolve));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  await listen();
  return {
    get port() {
      return port;
    },
    get up() {
      return server?.listening === true;
    },
    cut,
    restore: listen,
    close: cut,
  };
}

/** `url` with its host and port replaced by the relay's. */
export function throughRelay(url: string, relay: TcpRelay): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(relay.port);
  return parsed.toString();
}
