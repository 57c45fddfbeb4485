import type { Socket, TCPSocketListener } from "bun";

/**
 * A TCP proxy the test controls, standing between a gateway and PostgreSQL or Redis: `cut()`
 * drops every connection and refuses new ones (the server "goes down" for that gateway only,
 * leaving the machine's real service running for everyone else), `restore()` lets them through
 * again on the same port.
 */
export class TcpProxy {
  private listener: TCPSocketListener<{ peer?: Socket<unknown>; buffered: Uint8Array[] }> | undefined;
  private readonly open = new Set<Socket<unknown>>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  start(port = 0): this {
    const open = this.open;
    const target = this.target;
    this.listener = Bun.listen<{ peer?: Socket<unknown>; buffered: Uint8Array[] }>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          client.data = { buffered: [] };
          open.add(client as Socket<unknown>); // the data type does not matter to the set
          Bun.connect<undefined>({
            hostname: target.host,
            port: target.port,
            socket: {
              open(server) {
                open.add(server as Socket<unknown>); // as above
                client.data.peer = server as Socket<unknown>; // as above
                for (const b of client.data.buffered) server.write(b);
                client.data.buffered = [];
              },
              data(_server, chunk) {
                client.write(chunk);
              },
              close(server) {
                open.delete(server as Socket<unknown>); // as above
                client.end();
              },
              error() {
                client.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          if (client.data.peer) client.data.peer.write(chunk);
          else client.data.buffered.push(new Uint8Array(chunk));
        },
        close(client) {
          open.delete(client as Socket<unknown>); // as above
          client.data.peer?.end();
        },
        error() {},
      },
    });
    this.port = this.listener.port;
    return this;
  }

  /** Every connection dropped, new ones refused. */
  cut(): void {
    this.listener?.stop(true);
    this.listener = undefined;
    for (const s of this.open) s.terminate();
    this.open.clear();
  }

  /** Accepting again, on the same port (nothing to do if it is). */
  restore(): void {
    if (!this.listener) this.start(this.port);
  }

  stop(): void {
    this.cut();
  }
}
