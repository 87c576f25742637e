/**
 * A process saving conversations into a file conversation store until it is killed (the store's kill -9 test,
 * src/stores/file/conversation-log-process.test.ts): `node --import tsx conversation-store-child.ts <dir> <name>`
 * saves `<name>-0`, `<name>-1`, … (each with `coveredMessages` = its number and a blob of a few KB to a few hundred,
 * so a kill often lands in the middle of an append) and prints `saved <n>` once a save's promise has resolved.
 */
import { createFileConversationStore } from "../../src/stores/file/conversation-store.js";
import { sampleRecord } from "./conversation-record.js";

const [dir, name] = process.argv.slice(2);
if (dir === undefined || name === undefined) throw new Error("usage: conversation-store-child.ts <dir> <name>");
const store = createFileConversationStore({ dir });
for (let i = 0; ; i++) {
  // The user message blob (reached from the checkpoint, so kept) padded: entries of 0.6 to 240 KB.
  const record = sampleRecord(`${name}-${i}`, Date.now(), `${name}-${i}-${"x".repeat((i % 7) * 40_000)}`);
  await store.save({ ...record, coveredMessages: i });
  process.stdout.write(`saved ${i}\n`);
}
