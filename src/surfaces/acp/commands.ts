/**
 * The session's slash commands, announced with `available_commands_update` and run by the agent itself: a prompt
 * whose text starts with one of them is never sent to Cursor. `/plan`, `/ask`, `/agent` switch the mode,
 * `/model <id>` the model (through the config options, so the editor gets `config_option_update`), `/usage` answers
 * with the plan usage, `/compact` continues in a new Cursor conversation seeded with a summary Cursor writes of
 * this one. Any other `/word` is an ordinary prompt.
 */
import type { AvailableCommand, ContentBlock } from "@agentclientprotocol/sdk";
import type { PlanUsage } from "../kit/deps.js";

/** The commands, in the order the editor lists them. */
export const COMMANDS: AvailableCommand[] = [
  { name: "plan", description: "Switch to Plan mode: plan the change before making it" },
  { name: "ask", description: "Switch to Ask mode: answer without changing anything" },
  { name: "agent", description: "Switch to Agent mode: read, edit and run commands" },
  { name: "model", description: "Switch the model (a Cursor model id)", input: { hint: "<model id>" } },
  { name: "usage", description: "This billing cycle's Cursor plan usage" },
  {
    name: "compact",
    description: "Continue in a new Cursor conversation that starts from a summary Cursor writes of this one",
  },
];

/** A command the prompt runs. */
export interface SlashCommand {
  name: string;
  /** What follows the name, trimmed ("" when nothing). */
  argument: string;
}

/** The command a prompt is, when its first block is text starting with a known `/name`; undefined otherwise. */
export function slashCommandOf(blocks: readonly ContentBlock[]): SlashCommand | undefined {
  const first = blocks[0];
  if (first?.type !== "text") return undefined;
  const match = /^\s*\/([a-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(first.text);
  if (match === null) return undefined;
  const name = match[1] as string;
  if (!COMMANDS.some((command) => command.name === name)) return undefined;
  return { name, argument: (match[2] ?? "").trim() };
}

/** Plan usage as one short paragraph for the editor. */
export function describeUsage(usage: PlanUsage | undefined): string {
  if (usage === undefined) return "Cursor did not report plan usage for this account.";
  const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
  const parts = [
    usage.limitCents > 0
      ? `Plan usage: ${dollars(usage.usedCents)} of ${dollars(usage.limitCents)} (${Math.round((usage.usedFraction ?? 0) * 100)}%), ${dollars(usage.remainingCents)} left.`
      : `Plan usage: ${dollars(usage.usedCents)} (no limit reported).`,
  ];
  if (usage.cycleEnd !== null) parts.push(`Resets ${usage.cycleEnd}.`);
  if (usage.message !== "") parts.push(usage.message);
  return parts.join(" ");
}

/** What `/compact` asks Cursor for (in Ask mode, on the current conversation). */
export const SUMMARY_REQUEST =
  "Summarize our conversation so far for a fresh start: the goal, what was decided and done (files, commands, " +
  "results), and what is still open. Write only the summary.";

/** The first message of the new conversation `/compact` starts. */
export function seededMessage(summary: string): string {
  return `This conversation continues an earlier one. Summary of it:\n\n${summary}`;
}
