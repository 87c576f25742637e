// Preloaded only into the serves of the memory scenario (bench/serve-process.ts, `gcHook`). It does nothing until
// signalled. On SIGUSR2 it reads V8's young generation (new space: committed bytes, and how many of them are resident,
// i.e. touched) as it stands, then, only when the
// process was started with `--expose-gc` (the post-GC floor: `node --expose-gc --import bench/gc-hook.mjs …`), runs
// three full collections 20 ms apart, and prints one line `bench-gc {"rss":…,"heapUsed":…,"external":…,"newSpace":…}`
// on stderr (with `newSpaceResident`). Without `--expose-gc` (the raw serve: `node --import bench/gc-hook.mjs …`) it
// collects nothing: it only answers the young generation's sizes, which no reading from /proc gives.
import { getHeapSpaceStatistics } from "node:v8";

const youngGeneration = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space");

process.on("SIGUSR2", () => {
  const young = youngGeneration();
  const newSpace = young?.space_size;
  const newSpaceResident = young?.physical_space_size;
  const report = () => {
    const { rss, heapUsed, external } = process.memoryUsage();
    process.stderr.write(`bench-gc ${JSON.stringify({ rss, heapUsed, external, newSpace, newSpaceResident })}\n`);
  };
  const gc = globalThis.gc;
  if (gc === undefined) {
    report();
    return;
  }
  let left = 3;
  const step = () => {
    gc();
    if (--left > 0) {
      setTimeout(step, 20);
      return;
    }
    report();
  };
  step();
});
