/**
 * The Redis {@link LimitCounters}: instances sharing a store enforce one limit together. Per key three sorted sets
 * under `<prefix>limits:<key id>:` — `req` (request start times), `tok` (finished requests' tokens, member
 * `<slot>:<tokens>`), `par` (parallel slots scored by lease expiry) — and one Lua script that prunes the window,
 * decides and counts in a single atomic step, so N+1 requests spread over several instances get exactly one refusal.
 * Times are the instances' clocks (keep them in sync, as for any shared deployment).
 */
import type { AdmitInput, LimitCounters, WindowState } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

const ADMIT = `
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local rpm, tpm, par = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local slot, lease = ARGV[6], tonumber(ARGV[7])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now - window)
redis.call("ZREMRANGEBYSCORE", KEYS[3], "-inf", now)
local count = redis.call("ZCARD", KEYS[1])
local tokens = redis.call("ZRANGE", KEYS[2], 0, -1, "WITHSCORES")
local inflight = redis.call("ZCARD", KEYS[3])
local used = 0
for i = 1, #tokens, 2 do used = used + tonumber(string.match(tokens[i], ":(%d+)$")) end
local refused = ""
if rpm > 0 and count >= rpm then refused = "rpm"
elseif tpm > 0 and used >= tpm then refused = "tpm"
elseif par > 0 and inflight >= par then refused = "parallel" end
if refused == "" then
  if rpm > 0 then
    redis.call("ZADD", KEYS[1], now, slot)
    redis.call("PEXPIRE", KEYS[1], window)
    count = count + 1
  end
  if par > 0 then
    redis.call("ZADD", KEYS[3], now + lease, slot)
    redis.call("PEXPIRE", KEYS[3], lease)
    inflight = inflight + 1
  end
end
local newest = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")[2] or ""
local freeing = ""
if refused == "rpm" then freeing = redis.call("ZRANGE", KEYS[1], count - rpm, count - rpm, "WITHSCORES")[2] or "" end
local newestTokens = tokens[#tokens] or ""
local freeingTokens = ""
if refused == "tpm" then
  local left = used
  for i = 1, #tokens, 2 do
    left = left - tonumber(string.match(tokens[i], ":(%d+)$"))
    if left < tpm then freeingTokens = tokens[i + 1]; break end
  end
end
return {refused, count, newest, freeing, tostring(used), newestTokens, freeingTokens, inflight}
`;

const SETTLE = `
redis.call("ZREM", KEYS[2], ARGV[1])
local tokens, now, window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if tokens > 0 then
  redis.call("ZADD", KEYS[1], now, ARGV[1] .. ":" .. ARGV[2])
  redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
  redis.call("PEXPIRE", KEYS[1], window)
end
return 1
`;

const RENEW = `
local now, upto = tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2])
for i = 3, #ARGV do
  local expiry = redis.call("ZSCORE", KEYS[1], ARGV[i])
  if expiry and tonumber(expiry) > now then redis.call("ZADD", KEYS[1], "XX", upto, ARGV[i]) end
end
if redis.call("ZCARD", KEYS[1]) > 0 then redis.call("PEXPIRE", KEYS[1], tonumber(ARGV[2])) end
return 1
`;

type AdmitReply = [string, number, string, string, string, string, string, number];

/** The Redis client with the two scripts defined on it (run by SHA, loaded on first use). */
interface ScriptedRedis {
  cursorBridgeAdmit(...args: Array<string | number>): Promise<unknown>;
  cursorBridgeSettle(...args: Array<string | number>): Promise<unknown>;
  cursorBridgeRenew(...args: Array<string | number>): Promise<unknown>;
}

const time = (reply: string): number | undefined => (reply === "" ? undefined : Number(reply));

/** Limits shared by every instance on the store. */
export function createRedisLimitCounters(client: StoreClient): LimitCounters {
  const redis = client.redis as unknown as ScriptedRedis & typeof client.redis;
  if (typeof redis.cursorBridgeAdmit !== "function") {
    client.redis.defineCommand("cursorBridgeAdmit", { numberOfKeys: 3, lua: ADMIT });
    client.redis.defineCommand("cursorBridgeSettle", { numberOfKeys: 2, lua: SETTLE });
    client.redis.defineCommand("cursorBridgeRenew", { numberOfKeys: 1, lua: RENEW });
  }
  const keysOf = (keyId: string) => {
    const base = `${client.prefix}limits:${keyId}:`;
    return [`${base}req`, `${base}tok`, `${base}par`] as const;
  };
  return {
    async admit(input: AdmitInput): Promise<WindowState> {
      const [req, tok, par] = keysOf(input.keyId);
      const reply = (await storeCall(client, () =>
        redis.cursorBridgeAdmit(
          req,
          tok,
          par,
          input.now,
          input.windowMs,
          input.rpm,
          input.tpm,
          input.maxParallel,
          input.slotId,
          input.leaseMs,
        ),
      )) as AdmitReply;
      const [refused, count, newest, freeing, used, newestTokens, freeingTokens, inFlight] = reply;
      return {
        refused: refused === "" ? undefined : (refused as WindowState["refused"]),
        requestCount: Number(count),
        newestRequestAt: time(newest),
        freeingRequestAt: time(freeing),
        tokensUsed: Number(used),
        newestTokensAt: time(newestTokens),
        freeingTokensAt: time(freeingTokens),
        inFlight: Number(inFlight),
      };
    },
    async settle(keyId, slotId, tokens, now, windowMs) {
      const [, tok, par] = keysOf(keyId);
      await storeCall(client, () =>
        redis.cursorBridgeSettle(tok, par, slotId, Math.max(0, Math.round(tokens)), now, windowMs),
      );
    },
    async renew(keyId, slotIds, now, leaseMs) {
      if (slotIds.length === 0) return;
      const [, , par] = keysOf(keyId);
      await storeCall(client, () => redis.cursorBridgeRenew(par, now, leaseMs, ...slotIds));
    },
  };
}
