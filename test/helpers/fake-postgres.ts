import { createServer, type Socket } from "node:net";

/**
 * A PostgreSQL server that answers every connection's startup message with one FATAL error, as a
 * real server does for a database that does not exist (3D000) or a refused password (28P01):
 * the wire protocol's ErrorResponse, then the connection closes. Enough for a client's first
 * query to fail the way it would against the real thing, without PostgreSQL installed.
 */
export interface FakePostgres {
  port: number;
  /** Startup messages received: the user and database each client asked for. */
  startups: Array<Record<string, string>>;
  close(): Promise<void>;
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([
    ...[["S", "FATAL"], ["V", "FATAL"], ["C", code], ["M", message]].map(([k, v]) => Buffer.concat([Buffer.from(k!), Buffer.from(`${v}\0`)])),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/** Reads the startup message's parameters (user, database, …) from its bytes. */
function startupParameters(packet: Buffer): Record<string, string> {
  const parts = packet.subarray(8).toString("utf8").split("\0");
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) out[parts[i]!] = parts[i + 1]!;
  return out;
}

export async function startFakePostgres(answer: (startup: Record<string, string>) => { code: string; message: string }): Promise<FakePostgres> {
  const startups: Array<Record<string, string>> = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 8) return;
      const length = buffered.readInt32BE(0);
      if (buffered.length < length) return;
      const packet = buffered.subarray(0, length);
      buffered = buffered.subarray(length);
      // SSLRequest (80877103): "no TLS here", and the client goes on in plain text.
      if (packet.readInt32BE(4) === 80877103) {
        socket.write("N");
        return;
      }
      const startup = startupParameters(packet);
      startups.push(startup);
      const { code, message } = answer(startup);
      socket.end(errorResponse(code, message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    startups,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
