/**
 * A lock between processes that may run the same one-time work at once (building dist/, installing a test-only
 * package): a directory, because mkdir is atomic. A lock older than `staleMs` was left behind by a killed run and is
 * broken.
 */
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work` holding the lock directory `lockDir`, polling every `pollMs` while another process holds it. */
export async function withDirLock(lockDir, { staleMs, pollMs }, work) {
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if (error?.code !== "EEXIST") throw error;
      if (existsSync(lockDir) && Date.now() - statSync(lockDir).mtimeMs > staleMs) {
        rmSync(lockDir, { recursive: true, force: true });
      }
      await sleep(pollMs);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
