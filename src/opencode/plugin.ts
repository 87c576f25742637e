/**
 * The OpenCode plugin's hooks. `config` registers provider `cursor` with Cursor's models (from the bridge, with a
 * cached last-known list so startup never waits long); `auth` offers the login methods and, once a credential is
 * stored, hands OpenCode a `fetch` that starts the bridge child on first use and sends each request to it;
 * `provider.models` lists the same models where OpenCode asks for them. One child per OpenCode process.
 */
import { join } from "node:path";
import { DEFAULT_CURSOR_API_URL } from "../auth/index.js";
import { cacheDir, type PathEnvironment } from "../util/paths.js";
import type { TokenSource } from "../util/token-source.js";
import { authMethods } from "./auth-methods.js";
import { type BridgeChild, type BridgeChildOptions, startBridgeChild } from "./child.js";
import { type BridgeModel, configModels, createModelCache, fetchModels, toCatalogModel } from "./models.js";
import { parseAuth, readStoredAuth } from "./stored-auth.js";
import { type AuthAccess, createOpenCodeTokenSource, PROVIDER_ID } from "./tokens.js";
import type { ConfigModel, Hooks, OpenCodeAuth, Plugin, PluginInput } from "./types.js";

/** The AI SDK provider OpenCode uses for the bridge (bundled in OpenCode: nothing is downloaded). */
export const PROVIDER_NPM = "@ai-sdk/openai-compatible";
/** The base URL OpenCode is given; the plugin's fetch sends every request to the running child instead. */
export const PLUGIN_BASE_URL = "http://cursor-bridge.localhost/v1";
/** A cached list younger than this is used without asking the bridge at startup. */
export const FRESH_CACHE_MS = 60 * 60_000;
/** How long startup waits for the bridge's list when a cached one exists. */
export const DISCOVERY_TIMEOUT_MS = 2_000;
/** How long startup waits when nothing is cached (the first start after a login). */
export const FIRST_DISCOVERY_TIMEOUT_MS = 20_000;

/** What a request gets while OpenCode holds no Cursor credential (OpenAI's error shape, which OpenCode shows). */
export const NOT_LOGGED_IN_ERROR = {
  message:
    'Not logged in to Cursor. Run `opencode auth login`, choose "cursor", then log in with Cursor in the browser ' +
    "or paste a Cursor API key; then run this again.",
  type: "authentication_error",
  param: null,
  code: "not_logged_in",
};

/** How long one write to OpenCode's auth store may take; after that the tokens wait in memory for the next try. */
export const AUTH_WRITE_TIMEOUT_MS = 10_000;

/** Where the plugin runs; everything process-wide is passed in so tests can build plugins side by side. */
export interface PluginEnvironment {
  env: Readonly<Record<string, string | undefined>>;
  paths: PathEnvironment;
  /** Absolute path of bin/cursor-bridge.js. */
  binPath: string;
  now?: () => number;
  /** @default startBridgeChild */
  startChild?: (options: BridgeChildOptions) => Promise<BridgeChild>;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    (timer as { unref?: () => void }).unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Sends an OpenCode request to the child instead: same path and query, the child's per-run key. */
function fetchFromChild(child: BridgeChild, input: string | URL | Request, init: RequestInit | undefined) {
  const original = new URL(input instanceof Request ? input.url : String(input));
  const target = `${new URL(child.baseURL).origin}${original.pathname}${original.search}`;
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init?.headers).forEach((value, key) => {
    headers.set(key, value);
  });
  headers.set("authorization", `Bearer ${child.apiKey}`);
  return input instanceof Request
    ? fetch(new Request(target, input), { ...init, headers })
    : fetch(target, { ...init, headers });
}

/** Builds the plugin function for an environment. */
export function createCursorPlugin(environment: PluginEnvironment): Plugin {
  return async (input: PluginInput): Promise<Hooks> => {
    const { env, paths } = environment;
    const now = environment.now ?? Date.now;
    const startChild = environment.startChild ?? startBridgeChild;
    const apiUrl = env.CURSOR_API_URL?.trim() || DEFAULT_CURSOR_API_URL;
    const websiteUrl = env.CURSOR_WEBSITE_URL?.trim() || "https://cursor.com";

    // Tokens OpenCode's store has not confirmed yet (a write that failed or timed out) come first and are written
    // again on the next token request, so a rotated refresh token is never dropped. Then the newest source: what the
    // loader can read, what the provider hook was given, the store itself.
    let unsaved: OpenCodeAuth | undefined;
    let loaderAuth: (() => Promise<OpenCodeAuth | undefined>) | undefined;
    let hookAuth: OpenCodeAuth | undefined;
    const persist = async (auth: OpenCodeAuth): Promise<void> => {
      unsaved = auth;
      const result = await withTimeout(
        input.client.auth.set({ path: { id: PROVIDER_ID }, body: auth }),
        AUTH_WRITE_TIMEOUT_MS,
      );
      // The SDK reports a refused write in `error` instead of throwing.
      const error = (result as { error?: unknown } | undefined)?.error;
      if (error !== undefined && error !== null) throw new Error("OpenCode refused to store the Cursor tokens");
      if (unsaved === auth) unsaved = undefined;
    };
    const access: AuthAccess = {
      read: async () => unsaved ?? (await loaderAuth?.()) ?? hookAuth ?? (await readStoredAuth(paths, PROVIDER_ID)),
      write: persist,
    };
    const storeTokens = createOpenCodeTokenSource({ auth: access, apiUrl, now });
    // One retry at a time: the child's concurrent token requests would otherwise each write the same tokens.
    let retrying: Promise<void> | undefined;
    const retryUnsaved = (): void => {
      if (unsaved === undefined || retrying !== undefined) return;
      retrying = persist(unsaved)
        .catch(() => undefined)
        .finally(() => {
          retrying = undefined;
        });
    };
    const tokenSource: TokenSource = {
      getAccessToken: (signal) => {
        retryUnsaved();
        return storeTokens.getAccessToken(signal);
      },
      refreshAfterUnauthenticated: (rejected, signal) => {
        retryUnsaved();
        return storeTokens.refreshAfterUnauthenticated(rejected, signal);
      },
    };

    let running: BridgeChild | undefined;
    let starting: Promise<BridgeChild> | undefined;
    const ensureChild = async (): Promise<BridgeChild> => {
      if (running !== undefined && !running.exited()) return running;
      starting ??= startChild({ binPath: environment.binPath, tokenSource, env })
        .then((child) => {
          running = child;
          return child;
        })
        .finally(() => {
          starting = undefined;
        });
      return starting;
    };
    const pluginFetch = async (request: string | URL | Request, init?: RequestInit): Promise<Response> =>
      fetchFromChild(await ensureChild(), request, init);

    const cache = createModelCache(join(cacheDir(paths), "opencode-models.json"));
    let discovery: Promise<BridgeModel[]> | undefined;
    const discover = (): Promise<BridgeModel[]> => {
      discovery ??= (async () => {
        const child = await ensureChild();
        const models = await fetchModels(child.baseURL, child.apiKey, 30_000);
        await cache.write(apiUrl, models, now()).catch(() => undefined);
        return models;
      })();
      // A failed discovery may be retried later; a late one still refreshes the cache for the next start.
      discovery.catch(() => {
        discovery = undefined;
      });
      return discovery;
    };
    /** The cached list when fresh, else the bridge's within a short wait, else the stale cache. */
    const currentModels = async (): Promise<BridgeModel[] | undefined> => {
      const cached = await cache.read(apiUrl);
      if (cached !== undefined && now() - cached.savedAt < FRESH_CACHE_MS) return cached.models;
      try {
        return await withTimeout(discover(), cached === undefined ? FIRST_DISCOVERY_TIMEOUT_MS : DISCOVERY_TIMEOUT_MS);
      } catch {
        return cached?.models;
      }
    };

    /**
     * Without a credential OpenCode never calls the auth loader, so the provider's own `fetch` answers: at once, with
     * an error naming `opencode auth login` (instead of a provider OpenCode drops, "Provider not found", after its
     * retries). A login made meanwhile (the TUI's /connect) is used from the next request on.
     */
    const notLoggedInFetch = async (request: string | URL | Request, init?: RequestInit): Promise<Response> => {
      if ((await access.read()) !== undefined) return pluginFetch(request, init);
      return Response.json({ error: NOT_LOGGED_IN_ERROR }, { status: 401, headers: { "x-should-retry": "false" } });
    };

    return {
      async config(config) {
        config.provider ??= {};
        const existing = config.provider[PROVIDER_ID] ?? {};
        const loggedIn = (await access.read()) !== undefined;
        const models = loggedIn ? await currentModels() : undefined;
        const entries: Record<string, ConfigModel> = configModels(models ?? [], existing.models ?? {});
        // Cursor's automatic routing always exists: the provider stays usable even when discovery failed, and
        // without a login it is there to say so.
        if (entries.auto === undefined) entries.auto = { name: "Cursor Auto", tool_call: true };
        config.provider[PROVIDER_ID] = {
          ...existing,
          name: existing.name ?? "Cursor",
          npm: existing.npm ?? PROVIDER_NPM,
          options: {
            ...existing.options,
            baseURL: PLUGIN_BASE_URL,
            ...(loggedIn ? {} : { apiKey: "cursor-bridge-plugin", fetch: notLoggedInFetch }),
          },
          models: entries,
        };
      },
      provider: {
        id: PROVIDER_ID,
        async models(provider, ctx) {
          const auth = parseAuth(ctx.auth);
          if (auth === undefined) return provider.models;
          hookAuth = auth;
          const models = (await currentModels()) ?? [];
          const generated = Object.fromEntries(models.map((m) => [m.id, toCatalogModel(m, PROVIDER_ID, PROVIDER_NPM)]));
          return { ...generated, ...provider.models };
        },
      },
      auth: {
        provider: PROVIDER_ID,
        async loader(getAuth) {
          loaderAuth = async () => parseAuth(await getAuth().catch(() => undefined));
          return { baseURL: PLUGIN_BASE_URL, apiKey: "cursor-bridge-plugin", fetch: pluginFetch };
        },
        methods: authMethods({ apiUrl, websiteUrl, paths, now }),
      },
      async dispose() {
        running?.stop();
      },
    };
  };
}
