/**
 * The dependency rule of house-style §2, enforced in `npm run lint`.
 * Dependencies point inward to pure code; only composition roots (server/, cli/, plugin/) wire layers together.
 */
const layer = (name) => `^src/${name}/`;
const forbid = (name, from, to, comment) => ({
  name,
  severity: "error",
  comment,
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    forbid("gen-is-generated", layer("gen"), "^src/(?!gen/)", "src/gen only imports itself and @bufbuild"),
    forbid("util-is-leaf", layer("util"), "^src/(?!util/)", "util/ holds leaf helpers"),
    forbid(
      "protocol-inward",
      layer("protocol"),
      "^src/(?!(gen|protocol|util)/)",
      "protocol knows protobuf, not OpenAI",
    ),
    forbid(
      "backend-inward",
      layer("backend"),
      "^src/(?!(gen|protocol|backend|util)/)",
      "backend receives auth by injection",
    ),
    forbid("openai-stands-alone", layer("openai"), "^src/(?!(openai|util)/)", "openai knows nothing about Cursor"),
    forbid(
      "anthropic-stands-alone",
      layer("anthropic"),
      "^src/(?!(anthropic|util)/)",
      "anthropic knows nothing about Cursor",
    ),
    forbid(
      "responses-stands-alone",
      layer("responses"),
      "^src/(?!(responses|openai|util)/)",
      "the Responses wire format knows nothing about Cursor",
    ),
    forbid(
      "bridge-is-pure",
      layer("bridge"),
      "^src/(?!(bridge|openai|anthropic|responses|backend/types|engine/types|util)(/|\\.ts$))",
      "bridge: pure translation, types only",
    ),
    forbid(
      "engine-inward",
      layer("engine"),
      "^src/(?!(engine|backend|util)/)",
      "the engine drives the agent client; it knows no HTTP and no surface",
    ),
    forbid(
      "engine-public-entry",
      "^src/(?!(engine|bridge)/)",
      "^src/engine/(?!(index|response-store)\\.ts$)",
      "server/ and every surface import only the engine's public entry, src/engine/index.ts (and the Responses store)",
    ),
    forbid(
      "bridge-engine-types-only",
      layer("bridge"),
      "^src/engine/(?!types\\.ts$)",
      "translators see the engine's contract, not its insides",
    ),
    forbid(
      "cluster-inward",
      layer("cluster"),
      "^src/(?!(cluster|engine|backend|auth|util)/)",
      "cluster/ (shared Redis stores, instance directory, forwarding, shared login) implements engine, backend and auth interfaces",
    ),
    forbid(
      "cluster-only-in-roots",
      "^src/(?!(cli|server|cluster)/)",
      layer("cluster"),
      "only the composition roots wire the shared store in; everyone else sees the interfaces",
    ),
    forbid("auth-inward", layer("auth"), "^src/(?!(auth|util)/)", "auth exposes a TokenSource"),
    forbid("config-inward", layer("config"), "^src/(?!(config|util)/)", "config is read by roots only"),
    forbid(
      "emulator-independent",
      layer("emulator"),
      "^src/(?!(gen|emulator|util)/|protocol/envelope)",
      "the emulator imports the generated schema (and the one envelope codec), never the client side",
    ),
    forbid(
      "opencode-plugin-stays-light",
      layer("opencode"),
      "^src/(?!(opencode|auth|util)/)",
      "the OpenCode plugin runs inside OpenCode's Bun runtime: it may use the login and refresh code (auth/) and leaf helpers (util/), never protocol/, backend/, engine/ or server/ (HTTP/2 and the bridge itself run in the Node child it starts, reached only over HTTP and stdio), and not config/ or cli/ (the child resolves its own configuration)",
    ),
    forbid(
      "config-only-in-roots",
      "^src/(?!(cli|server|plugin|config)/)",
      layer("config"),
      "config is read by roots only",
    ),
    forbid(
      "nobody-imports-roots",
      "^src/(?!(cli|plugin|opencode)/)",
      "^src/(cli|plugin|opencode)/",
      "nothing imports cli or the OpenCode plugin",
    ),
    forbid("only-cli-imports-server", "^src/(?!(cli|server|plugin)/)", layer("server"), "server is a composition root"),
    forbid("src-not-tests", "^src/", "^(test|tools|bench)/", "src never imports tests, tools or benchmarks"),
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.test\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
