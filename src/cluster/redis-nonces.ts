/**
 * Nonces of accepted cluster requests in the shared store (`SET NX PX`): whichever instance a replayed request
 * reaches, the first claim of its nonce already exists, until the signature's window has passed.
 */
import { type StoreClient, storeCall } from "../stores/redis/client.js";
import type { NonceStore } from "./cluster-auth.js";

export function createRedisNonceStore(client: StoreClient): NonceStore {
  return {
    claim: (nonce, ttlMs) =>
      storeCall(client, async () => {
        const key = `${client.prefix}cluster-nonce:${nonce}`;
        return (await client.redis.set(key, "1", "PX", Math.max(1, Math.ceil(ttlMs)), "NX")) === "OK";
      }),
  };
}
