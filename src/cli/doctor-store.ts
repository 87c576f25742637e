/** `cursor-bridge doctor`'s check of the conversation store (`--store`): the data directory, or a shared Redis. */
import { connectStore, redactStoreUrl } from "../stores/redis/client.js";
import { ProxyError } from "../util/errors.js";
import type { CliContext } from "./context.js";
import type { CheckResult } from "./doctor-checks.js";
import { isRedisStore } from "./store-setup.js";

/** Connects to the configured Redis store, writes and reads a probe key, and counts the running instances. */
export async function checkStore(ctx: CliContext): Promise<CheckResult> {
  const base = { id: "store", title: "Store" };
  const { store, clusterSecret } = ctx.config;
  if (!isRedisStore(store)) return { ...base, status: "ok", detail: "file (the data directory; one instance)" };
  const label = redactStoreUrl(store);
  if (clusterSecret === undefined) {
    return {
      ...base,
      status: "fail",
      detail: `${label} needs a cluster secret`,
      fix: "Set CURSOR_BRIDGE_CLUSTER_SECRET (the same on every instance, at least 16 characters).",
    };
  }
  let client: Awaited<ReturnType<typeof connectStore>> | undefined;
  try {
    client = await connectStore({ url: store, namespace: "doctor", timeoutMs: 2000 });
    const probe = `${client.prefix}probe:${process.pid}`;
    await client.redis.set(probe, "ok", "PX", 10_000);
    const read = await client.redis.get(probe);
    await client.redis.del(probe);
    if (read !== "ok") throw new Error("a probe key written was not read back");
    const version = /redis_version:(\S+)/.exec(await client.redis.info("server"))?.[1] ?? "unknown version";
    let instances = 0;
    let cursor = "0";
    do {
      const [next, keys] = await client.redis.scan(cursor, "MATCH", "cursor-bridge:*:instance:*", "COUNT", 100);
      cursor = next;
      instances += keys.length;
    } while (cursor !== "0");
    return { ...base, status: "ok", detail: `${label} (Redis ${version}), ${instances} instance(s) running` };
  } catch (error) {
    // A wrong URL, password, scheme or database is said as such (connectStore's usage error), not as an outage.
    if (error instanceof ProxyError && error.code === "invalid_request") {
      return { ...base, status: "fail", detail: error.message, fix: "Correct --store / CURSOR_BRIDGE_STORE." };
    }
    return {
      ...base,
      status: "fail",
      detail: `${label} is unreachable: ${error instanceof Error ? error.message : String(error)}`,
      fix: "Start Redis or correct --store / CURSOR_BRIDGE_STORE.",
    };
  } finally {
    await client?.close();
  }
}
