/**
 * The dependency rule of house-style §2, enforced in `npm run lint`.
 * Dependencies point inward to pure code; only composition roots (server/, cli/, plugin/) wire layers together.
 *
 * Tests next to the source (`*.test.ts` under src/) are checked too, by the rules of the code beside them. Beyond what
 * that code may import, a test may wire its subject the way a composition root does: with server/ and cluster/, the
 * emulator (Cursor's stand-in), the file and Redis stores, and the fixtures of test/support/. Anything else a test
 * needs from another layer says it belongs in test/ (which may import anything).
 */
const layer = (name) => `^src/${name}/`;
const TEST_FILE = "\\.test\\.ts$";
const TEST_WIRING = "^(src/(server|cluster|emulator)/|src/stores/(file|redis)/|test/support/)";
const forbid = (name, from, to, comment) => [
  { name, severity: "error", comment, from: { path: from, pathNot: TEST_FILE }, to: { path: to } },
  {
    name,
    severity: "error",
    comment: `${comment} (a test next to the source may also wire its subject, see the top of this file)`,
    from: { path: `(?=.*${TEST_FILE})${from}` },
    to: { path: to, pathNot: TEST_WIRING },
  },
];

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
      "connect-knows-no-cursor",
      layer("protocol/connect"),
      "^src/protocol/cursor/",
      "protocol/connect/ is Connect framing and transport; the Cursor-specific RPCs sit above it in protocol/cursor/",
    ),
    forbid(
      "stores-inward",
      layer("stores"),
      "^src/(?!(gen|stores|util)/|backend/types\\.ts$)",
      "stores/ holds the store interfaces and their memory, file and Redis implementations; it sees only plain types",
    ),
    forbid(
      "store-implementations-in-roots",
      "^src/(?!(cli|server|cluster|stores)/)",
      "^src/stores/(file|redis)/",
      "the file and Redis stores are chosen by the composition roots; every other layer sees src/stores/types.ts (and the memory stores)",
    ),
    forbid(
      "backend-inward",
      layer("backend"),
      "^src/(?!(gen|protocol|backend|stores|util)/)",
      "backend receives auth by injection",
    ),
    forbid(
      "kit-inward",
      layer("surfaces/kit"),
      "^src/(?!(surfaces/kit|stores|util)/|backend/types\\.ts$|engine/(index|types)\\.ts$|cluster/cluster-auth\\.ts$)",
      "the request kit every surface uses sees the engine's contract, the stores' interfaces and leaf helpers",
    ),
    forbid(
      "surfaces-inward",
      "^src/surfaces/(?!kit/)",
      "^src/(?!(surfaces|stores|util)/|backend/types\\.ts$|engine/(index|types)\\.ts$)",
      "a surface translates its wire format to the engine's turn request and back, through the kit",
    ),
    forbid(
      "surfaces-apart",
      "^src/surfaces/(chat)/",
      "^src/surfaces/(messages|responses)/",
      "surfaces never import each other; what two share belongs in surfaces/kit/",
    ),
    forbid(
      "surfaces-apart-messages",
      "^src/surfaces/(messages)/",
      "^src/surfaces/(chat|responses)/",
      "surfaces never import each other; what two share belongs in surfaces/kit/",
    ),
    forbid(
      "surfaces-apart-responses",
      "^src/surfaces/(responses)/",
      "^src/surfaces/(chat|messages)/",
      "surfaces never import each other; what two share belongs in surfaces/kit/",
    ),
    forbid(
      "surfaces-apart-acp",
      "^src/surfaces/(acp)/",
      "^src/surfaces/(chat|messages|responses)/",
      "the ACP surface shares nothing with the HTTP surfaces but the kit",
    ),
    forbid(
      "engine-inward",
      layer("engine"),
      "^src/(?!(engine|backend|stores|util)/)",
      "the engine drives the agent client; it knows no HTTP and no surface",
    ),
    forbid(
      "engine-public-entry",
      "^src/(?!engine/)",
      "^src/engine/(?!(index|types)\\.ts$)",
      "server/ and every surface import only the engine's public entry, src/engine/index.ts (and its contract types.ts)",
    ),
    forbid(
      "cluster-inward",
      layer("cluster"),
      "^src/(?!(cluster|engine|backend|stores|auth|util)/)",
      "cluster/ (shared Redis stores, instance directory, forwarding, shared login) implements engine, backend and auth interfaces",
    ),
    forbid(
      "cluster-only-in-roots",
      "^src/(?!(cli|server|cluster)/|surfaces/kit/deps\\.ts$)",
      layer("cluster"),
      "only the composition roots wire the shared store in; everyone else sees the interfaces",
    ),
    forbid(
      "auth-inward",
      layer("auth"),
      "^src/(?!(auth|util)/|stores/(types|credentials)\\.ts$|stores/memory/)",
      "auth exposes a TokenSource; it sees the store interfaces and the in-memory stores, never a file or Redis one",
    ),
    forbid(
      "gateway-inward",
      layer("gateway"),
      "^src/(?!(gateway|surfaces/kit|stores/memory|util)/|stores/(types|accounts)\\.ts$|engine/(index|types)\\.ts$|backend/types\\.ts$)",
      "the team gateway (keys, limits, metrics, audit) sees the request kit, the store interfaces (and memory stores, and the account-name rule), the engine's contract and leaf helpers",
    ),
    forbid(
      "gateway-only-in-roots",
      "^src/(?!(cli|server|gateway)/)",
      layer("gateway"),
      "the team gateway is wired in by the composition roots (server/, cli/) only",
    ),
    forbid("config-inward", layer("config"), "^src/(?!(config|util)/)", "config is read by roots only"),
    forbid(
      "emulator-independent",
      layer("emulator"),
      "^src/(?!(gen|emulator|util)/|protocol/connect/envelope)",
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
  ].flat(),
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
