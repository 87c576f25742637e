import { describe, expect, it } from "vitest";
import { createAsyncQueue } from "./async-queue.js";

describe("createAsyncQueue", () => {
  it("delivers in push order and resolves a push when its item is taken", async () => {
    const queue = createAsyncQueue<number>();
    const taken: number[] = [];
    const first = queue.push(1).then(() => taken.push(-1));
    const second = queue.push(2);
    const iterator = queue[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: 1 });
    await first;
    expect(taken).toEqual([-1]);
    expect(await iterator.next()).toEqual({ done: false, value: 2 });
    await second;
  });

  it("hands a push straight to a waiting reader", async () => {
    const queue = createAsyncQueue<string>();
    const iterator = queue[Symbol.asyncIterator]();
    const pending = iterator.next();
    await queue.push("a");
    expect(await pending).toEqual({ done: false, value: "a" });
  });

  it("ends after queued items once closed, and refuses new pushes", async () => {
    const queue = createAsyncQueue<number>();
    const queued = queue.push(1);
    queue.close();
    await expect(queue.push(2)).rejects.toThrow(/closed/);
    const values: number[] = [];
    for await (const value of queue) values.push(value);
    expect(values).toEqual([1]);
    await queued;
  });

  it("fail rejects queued and future pushes and ends a waiting reader", async () => {
    const queue = createAsyncQueue<number>();
    const boom = new Error("boom");
    const queued = queue.push(1);
    queue.fail(boom);
    await expect(queued).rejects.toBe(boom);
    await expect(queue.push(2)).rejects.toBe(boom);
    expect(await queue[Symbol.asyncIterator]().next()).toEqual({ done: true, value: undefined });

    const other = createAsyncQueue<number>();
    const waiting = other[Symbol.asyncIterator]().next();
    other.fail(boom);
    expect(await waiting).toEqual({ done: true, value: undefined });
  });

  it("a consumer that stops early fails pending pushes instead of leaving them hanging", async () => {
    const queue = createAsyncQueue<number>();
    const pushes = [queue.push(1), queue.push(2)];
    for await (const value of queue) {
      expect(value).toBe(1);
      break;
    }
    await expect(pushes[0]).resolves.toBeUndefined();
    await expect(pushes[1]).rejects.toThrow(/closed/);
  });
});
