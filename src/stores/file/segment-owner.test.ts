import { describe, expect, it } from "vitest";
import { alive, claimTag, HOST } from "./segment-owner.js";

const TTL = 60_000;
const quiet = (ms: number) => () => ms;

describe("segment owners", () => {
  it("a segment of this process is alive while one of its stores has the tag", () => {
    const tag = claimTag();
    expect(alive({ host: HOST, pid: process.pid, tag }, quiet(0), TTL)).toBe(true);
    // No host part (a name from before it was added) is this host's.
    expect(alive({ host: undefined, pid: process.pid, tag }, quiet(0), TTL)).toBe(true);
    // This pid with a tag no store of this process has: an earlier process's (a container's pid 1).
    expect(alive({ host: HOST, pid: process.pid, tag: "ffffffff" }, quiet(0), TTL)).toBe(false);
  });

  it("a process of this host is alive while its pid exists", () => {
    expect(alive({ host: HOST, pid: process.ppid, tag: "0a0b0c0d" }, quiet(TTL * 10), TTL)).toBe(true);
    // No pid is that large (Linux's pid_max is at most 2^22).
    expect(alive({ host: HOST, pid: 999_999_999, tag: "0a0b0c0d" }, quiet(0), TTL)).toBe(false);
  });

  it("another host's segment counts as alive until it has been quiet longer than the TTL", () => {
    const other = HOST === "00000000" ? "11111111" : "00000000";
    const owner = { host: other, pid: 999_999_999, tag: "0a0b0c0d" };
    expect(alive(owner, quiet(TTL), TTL)).toBe(true);
    expect(alive(owner, quiet(TTL + 1), TTL)).toBe(false);
  });

  it("tags are new for every store", () => {
    expect(claimTag()).not.toBe(claimTag());
    expect(HOST).toMatch(/^[0-9a-f]{8}$/);
  });
});
