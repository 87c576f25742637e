/**
 * What `keys` and `audit` share: the gateway's stores on the same `--store`, `--data-dir` and `--config-dir` as
 * `serve` (a Redis store is connected for the command and closed after it; no cluster secret is needed, since only
 * hashes and audit entries are read and written), and who is acting, from which machine, for the audit log.
 */
import { hostname, userInfo } from "node:os";
import { createKeyService, type KeyService } from "../gateway/index.js";
import type { StoreClient } from "../stores/redis/client.js";
import type { AuditLog, KeyStore } from "../stores/types.js";
import { createLogger } from "../util/logger.js";
import type { CliContext } from "./context.js";
import { prepareDataDir } from "./data-dir.js";
import { isRedisStore, openGatewayStores } from "./store-setup.js";

/** The gateway's stores, opened for one command. */
export interface GatewayCli {
  keys: KeyStore;
  audit: AuditLog;
  auditLocation: string;
  service: KeyService;
  /** `cli:<os user>`, from `cli@<host name>`. */
  actor: { actor: string; from: string };
  close(): Promise<void>;
}

function osUser(env: CliContext["io"]["env"]): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.USERNAME ?? "unknown";
  }
}

/** Who acts from the command line, and from where: `cli:<os user>` from `cli@<host name>`. */
export function cliActor(env: CliContext["io"]["env"]): { actor: string; from: string } {
  return { actor: `cli:${osUser(env)}`, from: `cli@${hostname()}` };
}

/** Opens the stores `serve` would use with the same options. */
export async function openGatewayCli(ctx: CliContext): Promise<GatewayCli> {
  let client: StoreClient | undefined;
  // A data directory that cannot be used is said as such (--data-dir and the cause), not as a raw EACCES.
  // Its warnings (a data directory tightened, or another user's) go to stderr like the command's own errors.
  const logger = createLogger({ level: "info", sink: (line) => ctx.io.err(`${line}\n`) });
  if (!isRedisStore(ctx.config.store)) prepareDataDir(ctx.config.dataDir, logger);
  else {
    const { connectStore } = await import("../stores/redis/client.js");
    client = await connectStore({ url: ctx.config.store });
  }
  const { keys, audit, auditLocation } = await openGatewayStores(ctx.config, client);
  return {
    keys,
    audit,
    auditLocation,
    service: createKeyService({ store: keys, audit, now: ctx.now }),
    actor: cliActor(ctx.io.env),
    close: async () => {
      await client?.close();
    },
  };
}
