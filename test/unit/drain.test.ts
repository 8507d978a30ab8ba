import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { drainable } from "../../src/http/drain.js";

/**
 * Stopping while the event loop is busy. On the embedded default the database runs in the server's
 * own thread, so a stop often begins while the loop is blocked and connections wait in the kernel's
 * queue. When the loop comes back its timers fire before it accepts them: a stop that decided then
 * ("nothing came for 100 ms") closed the listener and reset them (a newcomer's Ctrl-C under load
 * lost 9 of 14 requests so). The clients run in a worker thread, which keeps connecting and sending
 * while this thread is blocked on purpose.
 */
const CLIENTS = 6;
const CLIENT = `
const net = require("node:net");
const { workerData, parentPort } = require("node:worker_threads");
const sent = new Int32Array(workerData.sent);
const statuses = [];
let written = 0;
for (let i = 0; i < workerData.clients; i++) {
  const socket = net.connect(workerData.port, "127.0.0.1");
  let answer = "";
  socket.on("data", (d) => (answer += d));
  socket.on("error", () => {});
  socket.on("close", () => {
    statuses.push(Number(answer.split(" ")[1] ?? 0) || 0);
    if (statuses.length === workerData.clients) parentPort.postMessage(statuses);
  });
  socket.write("GET / HTTP/1.1\\r\\nHost: keyward\\r\\nConnection: close\\r\\n\\r\\n", () => {
    if (++written === workerData.clients) {
      Atomics.store(sent, 0, 1);
      Atomics.notify(sent, 0);
    }
  });
}
`;

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

describe("drainable(server).close()", () => {
  it("answers the connections that arrived while the event loop was blocked", async () => {
    server = createServer((_req, res) => res.end("ok"));
    const drain = drainable(server, 2000);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const sent = new SharedArrayBuffer(4);
    const worker = new Worker(CLIENT, { eval: true, workerData: { port: (server.address() as AddressInfo).port, clients: CLIENTS, sent } });
    const answered = new Promise<number[]>((resolve) => worker.once("message", resolve));
    // The stop begins, and this thread is busy: every request reaches the kernel's queue meanwhile.
    const closed = drain.close(5000);
    const flag = new Int32Array(sent);
    expect(Atomics.wait(flag, 0, 0, 10_000)).not.toBe("timed-out");
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    expect(await answered).toEqual(Array(CLIENTS).fill(200));
    await closed;
    await worker.terminate();
    expect(server.listening).toBe(false);
  });

  it("still stops taking connections once nothing arrives", async () => {
    server = createServer((_req, res) => res.end("ok"));
    const drain = drainable(server, 2000);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const started = Date.now();
    await drain.close(5000);
    expect(server.listening).toBe(false);
    // Nothing came since it started listening: it closes at once, far from the 2 s bound.
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
