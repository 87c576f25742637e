/**
 * A burst of connections while serve's thread is busy: the kernel completes every handshake into the listen queue
 * (LISTEN_BACKLOG) instead of dropping the SYNs past Node's default 511, whose clients would each wait a second for
 * a retransmission. The main thread is held in Atomics.wait while a worker thread connects, so nothing is accepted
 * until the worker has counted what the kernel alone completed.
 */
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { bind, LISTEN_BACKLOG, type PendingServer } from "./listen.js";

const CONNECTIONS = 1000;

/** Linux's cap on any listen queue, or undefined where it cannot be read. */
function somaxconn(): number | undefined {
  try {
    return Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8").trim());
  } catch {
    return undefined;
  }
}

const cap = somaxconn();
const skipReason =
  cap === undefined
    ? "no /proc/sys/net/core/somaxconn (not Linux): the kernel's listen queue cannot be checked here"
    : cap <= CONNECTIONS
      ? `net.core.somaxconn is ${cap}: the kernel caps every listen queue below ${CONNECTIONS + 1}`
      : undefined;
if (skipReason !== undefined) console.log(`skipped: ${skipReason}`);

// Connects CONNECTIONS sockets, then reports how many the kernel completed: all of them, or as many as had connected
// when no new one had for 3 s (a SYN the queue dropped is retried after 1 s and 3 s, into a queue still full).
const WORKER = `
const { workerData } = require("node:worker_threads");
const { connect } = require("node:net");
const { port, count, shared } = workerData;
const state = new Int32Array(shared);
const sockets = [];
let connected = 0;
let last = Date.now();
const report = () => {
  Atomics.store(state, 1, connected);
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
  setTimeout(() => { for (const s of sockets) s.destroy(); }, 100);
};
for (let i = 0; i < count; i++) {
  const socket = connect({ port, host: "127.0.0.1" });
  socket.on("error", () => {});
  socket.once("connect", () => {
    connected++;
    last = Date.now();
    if (connected === count) { clearInterval(timer); report(); }
  });
  sockets.push(socket);
}
const timer = setInterval(() => {
  if (Date.now() - last > 3000) { clearInterval(timer); report(); }
}, 100);
`;

let server: PendingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the listen queue", () => {
  it.skipIf(skipReason !== undefined)(
    `holds ${CONNECTIONS} connections made at once while serve's thread is busy`,
    async () => {
      expect(LISTEN_BACKLOG).toBeGreaterThan(CONNECTIONS);
      server = await bind({ host: "127.0.0.1", port: 0, apiKey: undefined });
      const shared = new SharedArrayBuffer(8);
      const state = new Int32Array(shared);
      const worker = new Worker(WORKER, { eval: true, workerData: { port: server.port, count: CONNECTIONS, shared } });
      const exited = new Promise((resolve) => worker.once("exit", resolve));
      // This thread accepts nothing until the worker has reported (or a minute has passed on a stalled machine).
      Atomics.wait(state, 0, 0, 60_000);
      expect(Atomics.load(state, 0)).toBe(1);
      expect(Atomics.load(state, 1)).toBe(CONNECTIONS);
      await worker.terminate();
      await exited;
    },
    90_000,
  );
});
