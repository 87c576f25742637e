/**
 * Stop sequences (chat `stop`, Messages `stop_sequences`): Cursor's agent API has none, so the bridge cuts the answer
 * itself. The answer's text passes through with the last few characters held back (one fewer than the longest
 * sequence), so a sequence split across deltas is still found; at the first one found, the text before it goes out,
 * the turn ends there (`turn-end` `stop`) and the upstream turn is released, as when a client stops reading. Only the
 * answer's text is searched (not reasoning, not tool arguments), as OpenAI and Anthropic do.
 */
import type { BackendEvent } from "../../backend/types.js";

/** The earliest sequence in `text` (the longest of those starting there), or undefined. */
function firstStop(text: string, sequences: readonly string[]): { index: number; sequence: string } | undefined {
  let found: { index: number; sequence: string } | undefined;
  for (const sequence of sequences) {
    const index = text.indexOf(sequence);
    if (index < 0) continue;
    if (
      found === undefined ||
      index < found.index ||
      (index === found.index && sequence.length > found.sequence.length)
    ) {
      found = { index, sequence };
    }
  }
  return found;
}

/** Where to split `text` so that the last `keep` characters stay held, never inside a surrogate pair. */
function splitPoint(text: string, keep: number): number {
  let cut = Math.max(0, text.length - keep);
  const before = text.charCodeAt(cut - 1);
  if (cut > 0 && before >= 0xd800 && before <= 0xdbff) cut--;
  return cut;
}

/**
 * The turn's events with the answer cut at the first stop sequence; `onStop` is told which one ended it. Without
 * sequences the events pass unchanged.
 */
export async function* cutAtStopSequences(
  events: AsyncIterable<BackendEvent>,
  stops: readonly string[],
  onStop: (sequence: string) => void,
): AsyncGenerator<BackendEvent> {
  const sequences = stops.filter((stop) => stop !== "");
  if (sequences.length === 0) {
    yield* events;
    return;
  }
  // A loop, not Math.max(...lengths): a body may list more sequences than a call's arguments can hold.
  let keep = 0;
  for (const sequence of sequences) if (sequence.length - 1 > keep) keep = sequence.length - 1;
  let held = "";
  // Leaving this loop early (a sequence found) returns the source: the engine releases the upstream turn.
  for await (const event of events) {
    if (event.type !== "text-delta") {
      if (held !== "") yield { type: "text-delta", text: held };
      held = "";
      yield event;
      continue;
    }
    const text = held + event.text;
    const stop = firstStop(text, sequences);
    if (stop !== undefined) {
      if (stop.index > 0) yield { type: "text-delta", text: text.slice(0, stop.index) };
      onStop(stop.sequence);
      yield { type: "turn-end", reason: "stop" };
      return;
    }
    const cut = splitPoint(text, keep);
    if (cut > 0) yield { type: "text-delta", text: text.slice(0, cut) };
    held = text.slice(cut);
  }
  if (held !== "") yield { type: "text-delta", text: held };
}
