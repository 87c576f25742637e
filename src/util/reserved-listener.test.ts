import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ReservedListener, reserveListener } from "./reserved-listener.js";

const open: ReservedListener[] = [];
afterEach(async () => {
  for (const reserved of open.splice(0)) await reserved.close();
});

/** Connects, sends `text`, and collects what comes back until the connection closes (ended or reset). */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(text));
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    socket.on("error", () => {});
    socket.on("close", () => resolve(received));
  });
}

const echo = (socket: Socket) => socket.on("data", (chunk: Buffer) => socket.end(`echo:${chunk.toString()}`));

describe("reserveListener", () => {
  it("binds now; connections made before adoption wait with their bytes and are handed over, then new ones", async () => {
    const reserved = await reserveListener("127.0.0.1", 0);
    open.push(reserved);
    expect(reserved.port).toBeGreaterThan(0);
    let connections = 0;
    reserved.server.on("connection", () => connections++);
    const early = exchange(reserved.port, "early");
    await vi.waitFor(() => expect(connections).toBe(1));
    reserved.adopt(echo);
    expect(await early).toBe("echo:early");
    expect(await exchange(reserved.port, "later")).toBe("echo:later");
    expect(() => reserved.adopt(echo)).toThrow(/already been adopted/);
  });

  it("closes the port and the waiting connections when nothing adopted it", async () => {
    const reserved = await reserveListener("127.0.0.1", 0);
    let connections = 0;
    reserved.server.on("connection", () => connections++);
    const waiting = exchange(reserved.port, "never served");
    await vi.waitFor(() => expect(connections).toBe(1));
    await reserved.close();
    expect(await waiting).toBe("");
  });
});
