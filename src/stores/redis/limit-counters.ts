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
local requests = redis.call("ZRANGE", KEYS[1], 0, -1, "WITHSCORES")
local tokens = redis.call("ZRANGE", KEYS[2], 0, -1, "WITHSCORES")
local inflight = redis.call("ZCARD", KEYS[3])
local used = 0
for i = 1, #tokens, 2 do used = used + tonumber(string.match(tokens[i], ":(%d+)$")) end
local refused = ""
if rpm > 0 and #requests / 2 >= rpm then refused = "rpm"
elseif tpm > 0 and used >= tpm then refused = "tpm"
elseif par > 0 and inflight >= par then refused = "parallel" end
if refused == "" then
  if rpm > 0 then
    redis.call("ZADD", KEYS[1], now, slot)
    redis.call("PEXPIRE", KEYS[1], window)
    table.insert(requests, slot)
    table.insert(requests, tostring(now))
  end
  if par > 0 then
    redis.call("ZADD", KEYS[3], now + lease, slot)
    redis.call("PEXPIRE", KEYS[3], lease)
    inflight = inflight + 1
  end
end
return {refused, requests, tokens, inflight}
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

type AdmitReply = [string, string[], string[], number];

/** Limits shared by every instance on the store. */
export function createRedisLimitCounters(client: StoreClient): LimitCounters {
  const keysOf = (keyId: string) => {
    const base = `${client.prefix}limits:${keyId}:`;
    return [`${base}req`, `${base}tok`, `${base}par`] as const;
  };
  return {
    async admit(input: AdmitInput): Promise<WindowState> {
      const [req, tok, par] = keysOf(input.keyId);
      const reply = (await storeCall(client, () =>
        client.redis.eval(
          ADMIT,
          3,
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
      const [refused, requestPairs, tokenPairs, inFlight] = reply;
      const requests: number[] = [];
      for (let i = 1; i < requestPairs.length; i += 2) requests.push(Number(requestPairs[i]));
      const tokens: Array<[number, number]> = [];
      for (let i = 0; i + 1 < tokenPairs.length; i += 2) {
        const count = Number((tokenPairs[i] ?? "").split(":").at(-1));
        tokens.push([Number(tokenPairs[i + 1]), Number.isFinite(count) ? count : 0]);
      }
      return {
        refused: refused === "" ? undefined : (refused as WindowState["refused"]),
        requests,
        tokens,
        inFlight: Number(inFlight),
      };
    },
    async settle(keyId, slotId, tokens, now, windowMs) {
      const [, tok, par] = keysOf(keyId);
      await storeCall(client, () =>
        client.redis.eval(SETTLE, 2, tok, par, slotId, Math.max(0, Math.round(tokens)), now, windowMs),
      );
    },
  };
}
