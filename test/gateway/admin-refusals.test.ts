/**
 * A client hammering /admin with a wrong key does not grow the audit log a line a request: one peer's refusals are
 * written once, then counted, and the count written as one entry when the minute is up.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRefusalAudit, MAX_TRACKED_PEERS, REFUSAL_WINDOW_MS } from "../../src/gateway/admin/refusal-audit.js";
import { createGateway } from "../../src/gateway/index.js";
import { createMemoryAuditLog } from "../../src/stores/memory/audit-log.js";
import { createMemoryKeyStore } from "../../src/stores/memory/key-store.js";
import type { AuditEntry } from "../../src/stores/types.js";
import { silentLogger } from "../../src/util/logger.js";
import { appWithRecorder } from "../server/doors.js";

const ADMIN = "the-admin-key-0123456789";

afterEach(() => {
  vi.useRealTimers();
});

describe("refused admin requests in the audit log", () => {
  it("200 requests with a wrong key make one entry, then one with the count of the other 199", async () => {
    const audit = createMemoryAuditLog();
    const gateway = await createGateway({
      keys: createMemoryKeyStore(),
      audit,
      apiKey: undefined,
      adminKey: ADMIN,
      logger: silentLogger,
    });
    try {
      const { app } = appWithRecorder({}, silentLogger, undefined, { auth: gateway.auth, admin: gateway.admin });
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const wrong = { authorization: "Bearer not-the-admin-key" };
      for (let n = 0; n < 200; n += 1) {
        expect((await app.request("/admin/keys", { headers: wrong })).status).toBe(401);
      }
      // An admitted request is still written as it comes.
      expect((await app.request("/admin/keys", { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
      const anonymous = async () => (await audit.read()).filter((entry) => entry.actor === "anonymous");
      expect(await anonymous()).toHaveLength(1);
      expect((await audit.read()).filter((entry) => entry.actor === "admin-api")).toHaveLength(1);

      await vi.advanceTimersByTimeAsync(REFUSAL_WINDOW_MS);
      const [first, summary] = await anonymous();
      expect(first?.detail).toEqual({ method: "GET", status: 401 });
      expect(summary).toMatchObject({ action: "admin.request", target: "/admin/keys", from: first?.from });
      expect(summary?.detail).toMatchObject({ method: "GET", status: 401, repeated: 199 });

      // The next refusal opens a new window: written at once.
      await app.request("/admin/audit", { headers: wrong });
      expect(await anonymous()).toHaveLength(3);
      await vi.advanceTimersByTimeAsync(REFUSAL_WINDOW_MS);
      expect(await anonymous()).toHaveLength(3);

      // A count still open when the server stops is written as it closes.
      await app.request("/admin/keys", { headers: wrong });
      await app.request("/admin/keys", { headers: wrong });
      await app.request("/admin/keys", { headers: wrong });
      expect(await anonymous()).toHaveLength(4);
      await gateway.close();
      expect((await anonymous()).at(-1)?.detail).toMatchObject({ repeated: 2 });
    } finally {
      await gateway.close();
    }
  });

  it("tracks a bounded number of peers; refusals beyond them are written one by one", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const written: AuditEntry[] = [];
    const refusals = createRefusalAudit(async (entry) => {
      written.push(entry);
    });
    const entry = (peer: string): AuditEntry => ({ at: "t", actor: "anonymous", action: "admin.request", from: peer });
    for (let n = 0; n <= MAX_TRACKED_PEERS; n += 1) await refusals.refused(entry(`p${n}`), `p${n}`);
    expect(written).toHaveLength(MAX_TRACKED_PEERS + 1);
    await refusals.refused(entry(`p${MAX_TRACKED_PEERS}`), `p${MAX_TRACKED_PEERS}`);
    await refusals.refused(entry("p0"), "p0");
    expect(written).toHaveLength(MAX_TRACKED_PEERS + 2);
    await vi.advanceTimersByTimeAsync(REFUSAL_WINDOW_MS);
    expect(written.at(-1)?.detail).toMatchObject({ repeated: 1 });
    expect(written.at(-1)?.from).toBe("p0");
  });
});
