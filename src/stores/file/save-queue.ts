/**
 * The file conversation store's queued saves (conversation-store.ts has the design): one write at a time per
 * conversation, and the saves that arrive while it runs wait behind it as one slot that always holds the newest
 * record, so a burst of saves of one conversation costs two appends, not one per save.
 */
import type { ConversationRecord } from "../types.js";

/** The save waiting behind a conversation's running write: its newest record, and when it is written. */
export interface QueuedSave {
  record: ConversationRecord;
  done: Promise<void>;
}

/** Queues saves per conversation (by file name) in front of `write`. */
export class SaveQueue {
  /** The waiting save of each conversation that has one. */
  readonly queued = new Map<string, QueuedSave>();
  private readonly writing = new Map<string, Promise<void>>();

  constructor(private readonly write: (name: string, record: ConversationRecord) => Promise<void>) {}

  /** Queues the newest record of a conversation behind its running write; one write per queue. */
  enqueue(name: string, record: ConversationRecord): Promise<void> {
    const { queued, writing } = this;
    const pending = queued.get(name);
    if (pending !== undefined) {
      pending.record = record;
      return pending.done;
    }
    const slot: QueuedSave = { record, done: Promise.resolve() };
    slot.done = (async () => {
      await writing.get(name)?.catch(() => undefined);
      queued.delete(name);
      const running = this.write(name, slot.record);
      writing.set(name, running);
      try {
        await running;
      } finally {
        if (writing.get(name) === running) writing.delete(name);
      }
    })();
    queued.set(name, slot);
    return slot.done;
  }
}
