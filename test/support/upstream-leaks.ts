/** What a case that made the bridge fail must not leave behind upstream. */
import { expect } from "vitest";
import type { Stack } from "./stack.js";

/**
 * Every upstream turn opened since the emulator had `turnsBefore` has ended (waited for: a turn closes after its
 * answer), at least one was opened, and nothing is parked.
 */
export async function expectNothingLeftOpen(stack: Stack, turnsBefore: number): Promise<void> {
  await expect
    .poll(
      () =>
        stack.emulator
          .stats()
          .turns.slice(turnsBefore)
          .filter((turn) => turn.outcome === undefined).length,
    )
    .toBe(0);
  expect(stack.emulator.stats().turns.length).toBeGreaterThan(turnsBefore);
  expect(stack.parked.size()).toBe(0);
}
