/**
 * Named Cursor accounts (issue #29): one engine per account, each on its own agent client, token source and Cursor
 * connection, behind one {@link BridgeEngine} that dispatches every turn by `EngineRequest.account` (absent = the
 * default account). A turn never runs on another account: an account without an engine is a 403 naming it, never a
 * fallback. Each engine keeps its own parked turns and replay records, and sees the shared conversation index
 * through {@link accountIndex}, so two accounts sending the same history never continue each other's conversation.
 */
import type { ListModelsOptions, ModelInfo } from "../backend/types.js";
import { type ConversationIndex, DEFAULT_ACCOUNT } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import { type BridgeEngine, prefixedIndex } from "./engine.js";
import type { ParkedTurnInfo } from "./parked-turns.js";
import type { EngineRequest, EngineTurn, StartTurnOptions } from "./types.js";

/** The account whose history keys are stored unprefixed (what one cursor-bridge always stored). */
const UNPREFIXED_ACCOUNT = DEFAULT_ACCOUNT;

/**
 * The shared index as one account's engine sees it: the account `default` uses the keys as they are (conversations
 * recorded before accounts had names continue), any other account prefixes them with `account:<name>:`. Closing
 * it does nothing; the router closes the shared index once.
 */
export function accountIndex(index: ConversationIndex, account: string): ConversationIndex {
  return prefixedIndex(index, account === UNPREFIXED_ACCOUNT ? "" : `account:${account}:`);
}

/** Options of {@link createAccountRouter}. */
export interface AccountRouterOptions {
  /** One engine per logged-in account, by name. */
  engines: ReadonlyMap<string, BridgeEngine>;
  /** The account requests without one run on (it may have no engine: such requests then fail). */
  defaultAccount: string;
  /** The index the engines share through {@link accountIndex}; closed once by `closeAll`. */
  index?: ConversationIndex | undefined;
}

/** The 403 of a turn whose account has no login here. */
export function unknownAccount(account: string, isDefault: boolean): ProxyError {
  const what = isDefault ? `The default Cursor account \`${account}\`` : `The Cursor account \`${account}\``;
  return new ProxyError(
    "permission_denied",
    `${what} is not logged in on this cursor-bridge, so this request cannot run (it never runs on another account). ` +
      `The operator logs it in with \`cursor-bridge login --account ${account}\` and restarts the server.`,
    { detail: "account_unknown" },
  );
}

/** Builds the dispatching engine. */
export function createAccountRouter(options: AccountRouterOptions): BridgeEngine {
  const { engines, defaultAccount } = options;
  const engineOf = (account: string | undefined): BridgeEngine => {
    const name = account ?? defaultAccount;
    const engine = engines.get(name);
    if (engine === undefined) throw unknownAccount(name, account === undefined || account === defaultAccount);
    return engine;
  };
  const all = () => [...engines.values()];
  return {
    startTurn(request: EngineRequest, signal: AbortSignal, how?: StartTurnOptions): Promise<EngineTurn> {
      let engine: BridgeEngine;
      try {
        engine = engineOf(request.account);
      } catch (error) {
        return Promise.reject(error);
      }
      return engine.startTurn(request, signal, how);
    },
    /**
     * The account's models; without an account the default's, or (when the default is not logged in) those of the
     * first account that is: listing models runs no turn on anyone's behalf.
     */
    async listModels(signal?: AbortSignal, account?: string, options?: ListModelsOptions): Promise<ModelInfo[]> {
      const engine =
        account === undefined && !engines.has(defaultAccount) && engines.size > 0 ? all()[0] : engineOf(account);
      return (engine as BridgeEngine).listModels(signal, undefined, options);
    },
    parkedCount: () => all().reduce((sum, engine) => sum + engine.parkedCount(), 0),
    parkedTurns: (): ParkedTurnInfo[] =>
      all()
        .flatMap((engine) => engine.parkedTurns?.() ?? [])
        .sort((a, b) => a.parkedAt - b.parkedAt),
    async releaseOwned(owner: string, reason: string): Promise<number> {
      const counts = await Promise.all(all().map((engine) => engine.releaseOwned?.(owner, reason) ?? 0));
      return counts.reduce((sum, count) => sum + count, 0);
    },
    async releaseParked(release) {
      // The engine of the account the request ran on holds the turn (an account without one here has none).
      const engine = engines.get(release.account ?? defaultAccount);
      return (await engine?.releaseParked?.(release)) ?? 0;
    },
    async closeAll() {
      await Promise.all(all().map((engine) => engine.closeAll()));
      await options.index?.close();
    },
  };
}
