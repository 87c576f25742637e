/**
 * Test wiring of the gateway's limits: a principal per request from the key the client presents (its name is the
 * key: `Authorization: Bearer alice` or `x-api-key: alice`), with the limits registered for that name, resolved by
 * the limits middleware itself (`principalOf`): the place gw-keys' auth middleware fills in production.
 */
import { request as httpRequest } from "node:http";
import type { Context } from "hono";
import { createLimits, type Limits, type LimitsOptions } from "../../src/gateway/limits/index.js";
import { presentedKey } from "../../src/server/api-key.js";
import type { AppEnv } from "../../src/surfaces/kit/access-log.js";
import type { KeyLimits, Principal } from "../../src/surfaces/kit/principal.js";

/** Registered test keys: name → limits. */
export type KeyTable = Map<string, KeyLimits>;

/** The principal of a key name. */
export function principalFor(name: string, limits: KeyLimits): Principal {
  return { keyId: `id-${name}`, keyName: name, limits, checkModel: () => undefined };
}

/** Limits whose principal comes from the presented key's name (unknown names run without limits). */
export function testLimits(keys: KeyTable, options: Omit<LimitsOptions, "principalOf">): Limits {
  return createLimits({
    ...options,
    principalOf: (c: Context<AppEnv>) => {
      const name = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
      const limits = name === undefined ? undefined : keys.get(name);
      return name === undefined || limits === undefined ? undefined : principalFor(name, limits);
    },
  });
}

/** A raw HTTP answer with its trailers, read by Node's http client (fetch cannot read trailers). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  trailers: Record<string, string | undefined>;
}

/** POSTs JSON with Node's http client and reads the whole answer, trailers included. */
export function postRaw(url: string, key: string, body: unknown): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${key}`,
          "anthropic-version": "2023-06-01",
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: text,
            trailers: response.trailers,
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}
