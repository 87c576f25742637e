/**
 * Tool call ids on the Anthropic surface look like Anthropic's (`toolu_…`): every id going out gets the prefix once,
 * every id coming back loses it once, so the engine always sees its own ids (and a history written against the real
 * Anthropic API stays self-consistent).
 */
const PREFIX = "toolu_";

export const toAnthropicToolId = (id: string): string => `${PREFIX}${id}`;

export const fromAnthropicToolId = (id: string): string => (id.startsWith(PREFIX) ? id.slice(PREFIX.length) : id);
