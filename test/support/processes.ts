import { createServer } from "node:net";

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** How long {@link listeningOrigin} waits for the line unless told. */
const LISTENING_TIMEOUT_MS = 60_000;

/**
 * The origin (`http://127.0.0.1:PORT`) a `serve` or `emulator` child prints in its "listening on" line; rejects, with
 * what it wrote to stderr when `stderr` reads it, if the child exits first or prints none within `timeoutMs` (a
 * minute).
 */
export function listeningOrigin(
  child: {
    stdout: NodeJS.ReadableStream | null;
    once(event: "exit", listener: (code: number | null) => void): unknown;
  },
  name: string,
  stderr: () => string = () => "",
  timeoutMs = LISTENING_TIMEOUT_MS,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(
      () => reject(new Error(`${name} printed no "listening on" line in time; stderr:\n${stderr()}`)),
      timeoutMs,
    );
    child.stdout?.on("data", (chunk: Buffer | string) => {
      buffer += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(buffer);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      resolve(match[1]);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited early with ${code}; stderr:\n${stderr()}`));
    });
  });
}

/** A loopback port nothing listens on (bound, then released): a connection to it is refused at once. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
