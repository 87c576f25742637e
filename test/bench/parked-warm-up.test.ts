import { describe, expect, it } from "vitest";
import {
  WARM_UP,
  WARM_UP_MAX,
  warmUpUntilYoungFull,
  YOUNG_GENERATION_FULL,
  youngGenerationFull,
} from "../../bench/parked-memory.js";

const MB = 1024 * 1024;

/** A process whose young generation is `committed` (resident `resident`) after each batch in turn. */
function fakeProcess(readings: Array<{ newSpace?: number; newSpaceResident?: number }>) {
  let batches = 0;
  return {
    warmBatch: async () => {
      batches++;
    },
    read: async () => readings[Math.min(batches, readings.length) - 1] ?? {},
    batches: () => batches,
  };
}

describe("the parked-memory warm-up", () => {
  it("counts a young generation as full only at its largest size and wholly resident", () => {
    expect(youngGenerationFull({ newSpace: 16 * MB, newSpaceResident: 16 * MB })).toBe(false);
    expect(youngGenerationFull({ newSpace: YOUNG_GENERATION_FULL, newSpaceResident: 20 * MB })).toBe(false);
    expect(youngGenerationFull({ newSpace: YOUNG_GENERATION_FULL, newSpaceResident: YOUNG_GENERATION_FULL })).toBe(
      true,
    );
    // A process that cannot say is not warmed further, whichever way it says so: no sizes (serve without the hook),
    // NaN (the holder's answer), or null (NaN after the IPC channel's JSON).
    expect(youngGenerationFull({})).toBe(true);
    expect(youngGenerationFull({ newSpace: Number.NaN, newSpaceResident: Number.NaN })).toBe(true);
    expect(youngGenerationFull({ newSpace: null, newSpaceResident: null })).toBe(true);
  });

  it("parks at least WARM_UP, then batches until the young generation is full", async () => {
    const half = { newSpace: 16 * MB, newSpaceResident: 16 * MB };
    const growing = { newSpace: 32 * MB, newSpaceResident: 24 * MB };
    const full = { newSpace: 32 * MB, newSpaceResident: 32 * MB };
    const p = fakeProcess([half, half, half, growing, full, full]);
    const warmed = await warmUpUntilYoungFull(p.warmBatch, p.read);
    expect(p.batches()).toBe(5);
    expect(warmed).toBe(250);
  });

  it("stops at WARM_UP when the young generation is already full, and at WARM_UP_MAX when it never fills", async () => {
    const full = fakeProcess([{ newSpace: 32 * MB, newSpaceResident: 32 * MB }]);
    expect(await warmUpUntilYoungFull(full.warmBatch, full.read)).toBe(WARM_UP);
    const never = fakeProcess([{ newSpace: 16 * MB, newSpaceResident: 16 * MB }]);
    expect(await warmUpUntilYoungFull(never.warmBatch, never.read)).toBe(WARM_UP_MAX);
  });
});
