/**
 * The parts of OpenCode's plugin API this plugin uses, written out locally so cursor-bridge does not depend on
 * `@opencode-ai/plugin`. Checked against `@opencode-ai/plugin` 1.18.33 (`dist/index.d.ts`) and `@opencode-ai/sdk`
 * 1.18.33 (`Auth`, `Model`, `Provider` in `dist/v2/gen/types.gen.d.ts`, `ProviderConfig` in `dist/gen/types.gen.d.ts`).
 * Only the fields read or written here are listed; OpenCode passes more.
 */

/** A stored credential (`~/.local/share/opencode/auth.json`, or `OPENCODE_AUTH_CONTENT`). */
export type OpenCodeAuth =
  | { type: "oauth"; refresh: string; access: string; expires: number; accountId?: string; enterpriseUrl?: string }
  | { type: "api"; key: string; metadata?: Record<string, string> }
  | { type: "wellknown"; key: string; token: string };

/** The SDK client the plugin receives; only `auth.set` is used (it persists rotated tokens). */
export interface OpenCodeClient {
  auth: {
    set(options: { path: { id: string }; body: OpenCodeAuth }): Promise<unknown>;
  };
}

/** What OpenCode passes to the plugin function. */
export interface PluginInput {
  client: OpenCodeClient;
  directory: string;
  worktree: string;
}

/** One model entry of a provider block in OpenCode's config (`ProviderConfig.models[id]`). */
export interface ConfigModel {
  id?: string;
  name?: string;
  attachment?: boolean;
  reasoning?: boolean;
  temperature?: boolean;
  tool_call?: boolean;
  limit?: { context: number; output: number };
  modalities?: { input: Array<"text" | "image">; output: Array<"text"> };
  /** Named option sets (`opencode run --variant NAME`, the variant picker), merged into the request's options. */
  variants?: Record<string, Record<string, unknown>>;
}

/** A provider block of OpenCode's config. */
export interface ConfigProvider {
  name?: string;
  npm?: string;
  options?: Record<string, unknown>;
  models?: Record<string, ConfigModel>;
}

/** OpenCode's config as the `config` hook sees it (mutated in place). */
export interface OpenCodeConfig {
  provider?: Record<string, ConfigProvider>;
}

/** A catalog model (`Model` of the v2 SDK) as the `provider.models` hook returns it. */
export interface CatalogModel {
  id: string;
  providerID: string;
  api: { id: string; url: string; npm: string };
  name: string;
  family?: string;
  capabilities: {
    temperature: boolean;
    reasoning: boolean;
    attachment: boolean;
    toolcall: boolean;
    input: { text: boolean; audio: boolean; image: boolean; video: boolean; pdf: boolean };
    output: { text: boolean; audio: boolean; image: boolean; video: boolean; pdf: boolean };
    interleaved: boolean | { field: string };
  };
  cost: { input: number; output: number; cache: { read: number; write: number } };
  limit: { context: number; input?: number; output: number };
  status: "alpha" | "beta" | "deprecated" | "active";
  options: Record<string, unknown>;
  headers: Record<string, string>;
  release_date: string;
  variants?: Record<string, Record<string, unknown>>;
}

/** The provider the `provider.models` hook receives (only `models` is read). */
export interface CatalogProvider {
  id: string;
  models: Record<string, CatalogModel>;
}

/** What an OAuth method's callback resolves to. */
export type OAuthCallbackResult =
  | { type: "success"; provider?: string; refresh: string; access: string; expires: number }
  | { type: "success"; provider?: string; key: string }
  | { type: "failed" };

/** What an OAuth method's `authorize()` returns (`AuthOAuthResult`, the `auto` variant). */
export interface OAuthAuthorization {
  url: string;
  instructions: string;
  method: "auto";
  callback(): Promise<OAuthCallbackResult>;
}

/** A text prompt of an auth method. */
export interface AuthPrompt {
  type: "text";
  key: string;
  message: string;
  placeholder?: string;
  validate?: (value: string) => string | undefined;
}

/** One entry of `auth.methods`. */
export type AuthMethod =
  | { type: "oauth"; label: string; authorize(inputs?: Record<string, string>): Promise<OAuthAuthorization> }
  | {
      type: "api";
      label: string;
      prompts?: AuthPrompt[];
      authorize?(inputs?: Record<string, string>): Promise<{ type: "success"; key: string } | { type: "failed" }>;
    };

/** The hooks this plugin returns. */
export interface Hooks {
  config?: (config: OpenCodeConfig) => Promise<void>;
  auth?: {
    provider: string;
    loader?: (getAuth: () => Promise<OpenCodeAuth | undefined>, provider: unknown) => Promise<Record<string, unknown>>;
    methods: AuthMethod[];
  };
  provider?: {
    id: string;
    models?: (provider: CatalogProvider, ctx: { auth?: OpenCodeAuth }) => Promise<Record<string, CatalogModel>>;
  };
  dispose?: () => Promise<void>;
}

/** The plugin function OpenCode calls. */
export type Plugin = (input: PluginInput) => Promise<Hooks>;
