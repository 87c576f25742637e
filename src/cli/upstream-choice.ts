/**
 * Which upstream `serve` uses, decided from the configuration and the credentials alone (no protocol code loaded),
 * so the server can bind its port and print its banner, which names the upstream, before it loads the rest.
 */
import { ProxyError } from "../util/errors.js";
import type { ReservedListener } from "../util/reserved-listener.js";
import type { CliContext, ResolvedCredentials } from "./context.js";

/** Cursor with these credentials, or the embedded emulator (optionally on a port bound in advance). */
export type UpstreamChoice =
  | { kind: "cursor"; credentials: ResolvedCredentials }
  | { kind: "emulator"; listener?: ReservedListener | undefined };

/** `config.upstream` decides (auto: Cursor when credentials exist, else the emulator). */
export async function chooseUpstream(ctx: CliContext): Promise<UpstreamChoice> {
  const { config } = ctx;
  const credentials = config.upstream === "emulator" ? undefined : await ctx.resolveCredentials();
  if (credentials !== undefined) return { kind: "cursor", credentials };
  if (config.upstream === "cursor") {
    throw new ProxyError(
      "unauthenticated",
      "--upstream cursor needs Cursor credentials: run `cursor-bridge login` first.",
    );
  }
  return { kind: "emulator" };
}
