/**
 * A TCP port bound now and served later, so its URL can be printed before the code that serves it is loaded (`serve`
 * prints the embedded emulator's URL in its first lines). Connections that arrive before a server adopts the port wait
 * (Node buffers their first bytes) and are handed over, oldest first, on adoption.
 */
import { createServer, type Server, type Socket } from "node:net";

/** A bound port waiting for the server that will serve it. */
export interface ReservedListener {
  readonly host: string;
  readonly port: number;
  /** The listening server; its `close` stops listening. */
  readonly server: Server;
  /** Hands every connection to `onConnection`, those already waiting first. Once only. */
  adopt(onConnection: (socket: Socket) => void): void;
  /** Stops listening and drops waiting connections (for a port nothing adopted). */
  close(): Promise<void>;
}

/** Binds host:port (0 = any free port); rejects like `server.listen` does (EADDRINUSE, ...). */
export async function reserveListener(host: string, port: number): Promise<ReservedListener> {
  const waiting = new Set<Socket>();
  let handler: ((socket: Socket) => void) | undefined;
  const server = createServer((socket) => {
    if (handler !== undefined) {
      handler(socket);
      return;
    }
    waiting.add(socket);
    socket.once("close", () => waiting.delete(socket));
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address !== null ? address.port : port;
  return {
    host,
    port: boundPort,
    server,
    adopt(onConnection) {
      if (handler !== undefined) throw new Error("This reserved port has already been adopted.");
      handler = onConnection;
      for (const socket of waiting) {
        socket.removeAllListeners("close");
        socket.removeAllListeners("error");
        onConnection(socket);
      }
      waiting.clear();
    },
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of waiting) socket.destroy();
      return closed;
    },
  };
}
