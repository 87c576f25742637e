/**
 * `--host` as the system resolves it: a loopback name (`localhost`, `*.localhost`) that this machine resolves to
 * another address (an /etc/hosts entry) binds that address, which anyone on the network reaches with `Host:
 * localhost`; `serve` refuses it without an API key, as it refuses `--host 0.0.0.0`. The machine's name resolution is
 * changed for one process only: a private mount namespace (`unshare -m`) with its own /etc/hosts, which takes root.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));
const home = mkdtempSync(join(tmpdir(), "cursor-bridge-bind-address-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Why the namespace cannot be made here, or undefined when it can. */
function namespaceUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not root";
  const probe = spawnSync("unshare", ["-m", "true"]);
  return probe.status === 0 ? undefined : `unshare -m failed (${probe.error?.message ?? probe.stderr.toString()})`;
}

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`bind-address.test.ts skipped: ${unavailable}`);

/** Runs `serve --host localhost` where localhost resolves to `address`; resolves with its exit code and stderr. */
function serveWhereLocalhostIs(address: string, extra: string[]): Promise<{ code: number | null; err: string }> {
  const hosts = join(home, `hosts-${address}`);
  writeFileSync(hosts, `${address} localhost\n`);
  const argv = [BIN, "serve", "--host", "localhost", "--port", "0", "--upstream", "emulator", ...extra];
  const script = `mount --bind "$0" /etc/hosts && exec "$@"`;
  const child = spawn("unshare", ["-m", "sh", "-c", script, hosts, process.execPath, ...argv], {
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "c"), XDG_DATA_HOME: join(home, "d") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
    // Serving means the check let it through: stop it, the test then fails on the exit code.
    if (/listening on/.test(err)) child.kill("SIGKILL");
  });
  child.stdout.on("data", (chunk: Buffer) => {
    if (/listening on/.test(chunk.toString())) {
      err += chunk.toString();
      child.kill("SIGKILL");
    }
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, err })));
}

describe.skipIf(unavailable !== undefined)("serve --host localhost where localhost is not loopback", () => {
  it("refuses to serve the address it resolves to without an API key, and names it", { timeout: 60_000 }, async () => {
    // An address of this machine's own (only those can be bound) that is not loopback.
    const address = Object.values(networkInterfaces())
      .flat()
      .find((face) => face !== undefined && face.family === "IPv4" && !face.internal)?.address;
    expect(address, "this machine has no non-loopback IPv4 address to bind").toBeDefined();
    const { code, err } = await serveWhereLocalhostIs(address as string, []);
    expect(err).not.toContain("listening on");
    expect(code).toBe(2);
    expect(err).toContain(`--host localhost resolves to ${address} on this machine, not to a loopback address`);
    expect(err).toContain("without an API key");
  });

  it("still serves localhost that resolves to 127.0.0.1", { timeout: 60_000 }, async () => {
    const { code, err } = await serveWhereLocalhostIs("127.0.0.1", []);
    expect(err).toContain("listening on http://localhost:");
    expect(code).toBeNull(); // killed once it listened
  });
});
