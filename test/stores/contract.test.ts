/**
 * Runs the store contract (contract/) against every implementation in src/stores/: memory, file (a temporary
 * directory per store) and Redis (Debian's redis-server on a free loopback port, a key namespace per store). Without
 * redis-server the Redis rows are left out with a printed reason, unless CI=true (then this file fails).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { deriveKey } from "../../src/cluster/cluster-auth.js";
import { createFileAccountStore } from "../../src/stores/file/account-store.js";
import { createFileAuditLog } from "../../src/stores/file/audit-log.js";
import { createFileConversationIndex } from "../../src/stores/file/conversation-index.js";
import { createFileConversationStore } from "../../src/stores/file/conversation-store.js";
import { createFileCredentialStore } from "../../src/stores/file/credential-store.js";
import { createFileKeyStore } from "../../src/stores/file/key-store.js";
import { createFileResponseStore } from "../../src/stores/file/response-store.js";
import { createFileSettleQueue } from "../../src/stores/file/settle-queue.js";
import { createFileSpendStore } from "../../src/stores/file/spend-store.js";
import { createMemoryAccountStore } from "../../src/stores/memory/account-store.js";
import { createMemoryAuditLog } from "../../src/stores/memory/audit-log.js";
import { createBlobStore } from "../../src/stores/memory/blob-store.js";
import { createMemoryConversationIndex } from "../../src/stores/memory/conversation-index.js";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import { createMemoryCredentialStore } from "../../src/stores/memory/credential-store.js";
import { createMemoryKeyStore } from "../../src/stores/memory/key-store.js";
import { createMemoryLimitCounters } from "../../src/stores/memory/limit-counters.js";
import { createMemoryLock } from "../../src/stores/memory/lock.js";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import { createMemorySettleQueue } from "../../src/stores/memory/settle-queue.js";
import { createMemorySpendStore } from "../../src/stores/memory/spend-store.js";
import { createRedisAccountStore } from "../../src/stores/redis/account-store.js";
import { createRedisAuditLog } from "../../src/stores/redis/audit-log.js";
import { connectStore, namespaced, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisConversationIndex } from "../../src/stores/redis/conversation-index.js";
import { createRedisConversationStore } from "../../src/stores/redis/conversation-store.js";
import { createRedisCredentialStore } from "../../src/stores/redis/credential-store.js";
import { createRedisKeyStore } from "../../src/stores/redis/key-store.js";
import { createRedisLimitCounters } from "../../src/stores/redis/limit-counters.js";
import { createRedisLock } from "../../src/stores/redis/lock.js";
import { createRedisResponseStore } from "../../src/stores/redis/response-store.js";
import { createRedisSpendStore } from "../../src/stores/redis/spend-store.js";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";
import { accountStoreContract } from "./contract/accounts.js";
import { blobStoreContract } from "./contract/blobs.js";
import { conversationIndexContract, conversationStoreContract } from "./contract/conversations.js";
import { credentialStoreContract, lockContract } from "./contract/credentials.js";
import { auditLogContract, keyStoreContract } from "./contract/keys.js";
import { limitCountersContract, settleQueueContract, spendStoreContract } from "./contract/limits.js";
import { responseStoreContract } from "./contract/responses.js";

// --- file: a fresh temporary directory per store; `reopen` uses the last one ---------------------------------
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cb-contract-"));
  dirs.push(dir);
  return dir;
}
const lastDir = () => dirs.at(-1) ?? "";

// --- redis: one server for the file, a key namespace per store; `reopen` uses the last one --------------------
const missing = missingBinaries("redis-server", "redis-cli");
let server: RedisServer | undefined;
let root: StoreClient | undefined;
let namespaces = 0;
if (missing === undefined) {
  beforeAll(async () => {
    server = await startRedisServer();
    root = await connectStore({ url: server.url, namespace: "contract", timeoutMs: 2000 });
  });
  afterAll(async () => {
    await root?.close();
    await server?.close();
  });
}
function freshClient(): StoreClient {
  if (root === undefined) throw new Error("the Redis server did not start");
  namespaces += 1;
  return namespaced(root, `n${namespaces}`);
}
const lastClient = () => namespaced(root as StoreClient, `n${namespaces}`);
const KEY = deriveKey("a-cluster-secret-of-some-length", "credentials at rest");

conversationStoreContract({ name: "memory", open: async (options) => createMemoryConversationStore(options) });
conversationStoreContract({
  name: "file",
  open: async (options) => createFileConversationStore({ ...options, dir: join(await freshDir(), "conversations") }),
  reopen: async (options) => createFileConversationStore({ ...options, dir: join(lastDir(), "conversations") }),
});

conversationIndexContract({ name: "memory", open: async () => createMemoryConversationIndex() });
conversationIndexContract({
  name: "file",
  open: async () => createFileConversationIndex({ dir: await freshDir() }),
  reopen: async () => createFileConversationIndex({ dir: lastDir() }),
});

responseStoreContract({ name: "memory", open: async (options) => createMemoryResponseStore(options) });
responseStoreContract({
  name: "file",
  open: async (options) => createFileResponseStore({ ...options, dir: join(await freshDir(), "responses") }),
  reopen: async (options) => createFileResponseStore({ ...options, dir: join(lastDir(), "responses") }),
});

credentialStoreContract({ name: "memory", open: async ({ now }) => createMemoryCredentialStore(undefined, now) });
credentialStoreContract({
  name: "file",
  open: async ({ now }) => createFileCredentialStore({ configDir: await freshDir(), now }),
  reopen: async ({ now }) => createFileCredentialStore({ configDir: lastDir(), now }),
});

accountStoreContract({ name: "memory", open: async ({ now }) => createMemoryAccountStore({}, now) });
accountStoreContract({
  name: "file",
  open: async ({ now }) => createFileAccountStore({ configDir: await freshDir(), now }),
  reopen: async ({ now }) => createFileAccountStore({ configDir: lastDir(), now }),
  legacy: async ({ now }) => createFileCredentialStore({ configDir: lastDir(), now }),
});

lockContract({
  name: "memory",
  open: async () => {
    const lock = createMemoryLock();
    return { holder: () => lock };
  },
});

blobStoreContract({ name: "memory", open: async ({ initial }) => createBlobStore(initial) });

limitCountersContract({ name: "memory", open: async () => createMemoryLimitCounters() });
spendStoreContract({ name: "memory", open: async () => createMemorySpendStore() });
settleQueueContract({ name: "memory", open: async () => createMemorySettleQueue() });
settleQueueContract({
  name: "file",
  open: async () => createFileSettleQueue({ dataDir: await freshDir() }),
  reopen: async () => createFileSettleQueue({ dataDir: lastDir() }),
});
spendStoreContract({
  name: "file",
  open: async () => createFileSpendStore({ dataDir: await freshDir() }),
  reopen: async () => createFileSpendStore({ dataDir: lastDir() }),
});

keyStoreContract({ name: "memory", open: async () => createMemoryKeyStore() });
keyStoreContract({
  name: "file",
  open: async () => createFileKeyStore({ dir: await freshDir() }),
  reopen: async () => createFileKeyStore({ dir: lastDir() }),
});

auditLogContract({ name: "memory", open: async () => createMemoryAuditLog() });
auditLogContract({
  name: "file",
  open: async () => createFileAuditLog({ dir: await freshDir() }),
  reopen: async () => createFileAuditLog({ dir: lastDir() }),
});

if (missing === undefined) {
  conversationStoreContract({
    name: "redis",
    open: async (options) => createRedisConversationStore({ ...options, client: freshClient() }),
    reopen: async (options) => createRedisConversationStore({ ...options, client: lastClient() }),
  });
  conversationIndexContract({
    name: "redis",
    open: async () => createRedisConversationIndex({ client: freshClient() }),
    reopen: async () => createRedisConversationIndex({ client: lastClient() }),
  });
  responseStoreContract({
    name: "redis",
    open: async (options) => createRedisResponseStore({ ...options, client: freshClient() }),
    reopen: async (options) => createRedisResponseStore({ ...options, client: lastClient() }),
  });
  credentialStoreContract({
    name: "redis",
    open: async ({ now }) => createRedisCredentialStore(freshClient(), KEY, now),
    reopen: async ({ now }) => createRedisCredentialStore(lastClient(), KEY, now),
  });
  accountStoreContract({
    name: "redis",
    open: async ({ now }) => createRedisAccountStore(freshClient(), KEY, now),
    reopen: async ({ now }) => createRedisAccountStore(lastClient(), KEY, now),
    legacy: async ({ now }) => createRedisCredentialStore(lastClient(), KEY, now),
  });
  lockContract({
    name: "redis",
    open: async () => {
      // Each holder is a lock object of its own on the same name: what two instances sharing the store hold.
      const client = freshClient();
      return { holder: () => createRedisLock(client, "contract") };
    },
  });
  limitCountersContract({ name: "redis", open: async () => createRedisLimitCounters(freshClient()) });
  spendStoreContract({
    name: "redis",
    open: async () => createRedisSpendStore(freshClient()),
    reopen: async () => createRedisSpendStore(lastClient()),
  });
  keyStoreContract({
    name: "redis",
    open: async () => createRedisKeyStore(freshClient()),
    reopen: async () => createRedisKeyStore(lastClient()),
  });
  auditLogContract({
    name: "redis",
    open: async () => createRedisAuditLog(freshClient()),
    reopen: async () => createRedisAuditLog(lastClient()),
  });
}
