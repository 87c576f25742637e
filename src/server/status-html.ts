/**
 * The status page's HTML: inline CSS and script (allowed by a per-response CSP nonce), no external assets. The
 * first snapshot is embedded as JSON so the page renders at once; the script then fetches `/status.json` every
 * {@link REFRESH_MS} ms. Without a first snapshot (virtual keys exist and the request had no admin key) the page
 * shows only its sign-in: the admin key typed there is kept in the tab's sessionStorage and sent by the page's own
 * requests as `Authorization: Bearer` (never in a URL or a cookie; no form is submitted). Every value is written with `textContent` (never as markup): model names and user agents
 * come from clients.
 */
import type { StatusSnapshot } from "./status-snapshot.js";

/** How often the page refreshes itself. */
export const REFRESH_MS = 3_000;

/** JSON that is safe inside a `<script>` element (no `</script>`, no `<!--`). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const CSS = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --line: #e4e7ec; --bg: #fff; --card: #f8f9fb;
  --ok: #12805c; --warn: #b54708; --bad: #c01048; --bar: #2e90fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ec; --muted: #98a2b3; --line: #344054; --bg: #101828;
  --card: #1d2939; } }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 14px 24px;
  border-bottom: 1px solid var(--line); }
h1 { font-size: 18px; margin: 0; }
h1 small { color: var(--muted); font-weight: 400; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 10px; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; padding: 16px 24px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
section.wide { grid-column: 1 / -1; }
.badge { border-radius: 999px; padding: 2px 10px; font-weight: 600; font-size: 12px; color: #fff; }
.badge.cursor { background: var(--ok); } .badge.emulator { background: var(--warn); }
.muted { color: var(--muted); } .ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
#updated { margin-left: auto; color: var(--muted); font-size: 12px; }
.bar { height: 12px; border-radius: 6px; background: var(--line); overflow: hidden; margin: 6px 0; }
.bar > div { height: 100%; background: var(--bar); }
.bar.high > div { background: var(--bad); } .bar.mid > div { background: var(--warn); }
table { width: 100%; border-collapse: collapse; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px 4px 0; border-bottom: 1px solid var(--line); white-space: nowrap; }
td.num, th.num { text-align: right; } th { color: var(--muted); font-weight: 500; }
ul.chips { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 6px; }
ul.chips li { border: 1px solid var(--line); border-radius: 6px; padding: 1px 8px; font-size: 12px; }
.empty { color: var(--muted); font-style: italic; }
#signin { max-width: 520px; margin: 24px; } #signin input { width: 100%; margin: 8px 0; padding: 6px; }
`;

/** The page's script: renders a snapshot and refreshes it. Plain ES2020, no dependencies. */
const SCRIPT = `
"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
const dollars = (cents) => "$" + (cents / 100).toFixed(2);
const age = (ms) => { const s = Math.round(ms / 1000); return s < 60 ? s + " s" : s < 7200 ? Math.round(s / 60) + " min" : s < 172800 ? Math.round(s / 3600) + " h" : Math.round(s / 86400) + " days"; };
const when = (iso, now) => { const t = Date.parse(iso); if (!isFinite(t)) return "?"; const d = t - now; const text = new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC"; return text + " (" + (d >= 0 ? "in " + age(d) : age(-d) + " ago") + ")"; };
function fill(table, rows, empty) {
  const body = table.tBodies[0]; body.replaceChildren();
  if (rows.length === 0) { const tr = el("tr"); const td = el("td", empty, "empty"); td.colSpan = table.tHead.rows[0].cells.length; tr.append(td); body.append(tr); return; }
  for (const cells of rows) { const tr = el("tr"); for (const [text, cls, title] of cells) { const td = el("td", text, cls); if (title) td.title = title; tr.append(td); } body.append(tr); }
}
function render(s) {
  const up = $("upstream");
  up.textContent = s.upstream.kind === "emulator" ? "Cursor emulator: scripted answers, not your account" : "Cursor";
  up.className = "badge " + s.upstream.kind;
  $("account").textContent = s.upstream.account ? "Logged in as " + s.upstream.account : (s.upstream.kind === "emulator" ? "Not logged in to Cursor" : "Logged in");
  $("upstream-url").textContent = s.upstream.url || "";
  const usage = $("usage"); usage.replaceChildren();
  if (!s.usage.available) usage.append(el("p", "Plan usage unavailable: " + s.usage.reason, "empty"));
  else {
    const f = s.usage.usedFraction;
    const label = f === null ? dollars(s.usage.usedCents) + " used (no plan limit reported)" : (f * 100).toFixed(1) + "% used: " + dollars(s.usage.usedCents) + " of " + dollars(s.usage.limitCents);
    usage.append(el("div", label));
    if (f !== null) { const bar = el("div", undefined, "bar" + (f >= 0.9 ? " high" : f >= 0.7 ? " mid" : "")); const fillDiv = el("div"); fillDiv.style.width = Math.min(100, Math.max(0, f * 100)).toFixed(1) + "%"; bar.append(fillDiv); usage.append(bar); }
    const pct = (v) => (typeof v === "number" ? v.toFixed(1) + "%" : "?");
    if (typeof s.usage.totalPercentUsed === "number") {
      const b = s.usage.buckets;
      const auto = "Auto " + pct(s.usage.autoPercentUsed) + (b ? " (" + dollars(b.autoSpendCents) + " of " + dollars(b.autoLimitCents) + ")" : "");
      const api = "API " + pct(s.usage.apiPercentUsed) + (b ? " (" + dollars(b.apiSpendCents) + " of " + dollars(b.apiLimitCents) + ")" : "");
      const line = el("div", auto + " · " + api + " · Total " + pct(s.usage.totalPercentUsed));
      line.id = "usage-percentages";
      usage.append(line);
    }
    if (s.usage.onDemand) usage.append(el("div", "On-demand: " + dollars(s.usage.onDemand.usedCents) + " of " + dollars(s.usage.onDemand.limitCents), "muted"));
    if (s.usage.cycleEnd) usage.append(el("div", "Resets " + when(s.usage.cycleEnd, s.now), "muted"));
    if (s.usage.message) usage.append(el("div", s.usage.message, "muted"));
  }
  const accounts = s.accounts || [];
  $("accounts-section").hidden = accounts.length === 0;
  fill($("accounts"), accounts.map((a) => {
    const u = a.usage;
    const used = !u.available ? ["unavailable: " + u.reason, "muted"] : u.usedFraction === null ? [dollars(u.usedCents), "num"] : [(u.usedFraction * 100).toFixed(1) + "% (" + dollars(u.usedCents) + " of " + dollars(u.limitCents) + ")", "num" + (u.usedFraction >= 1 ? " bad" : "")];
    return [[a.name + (a.default ? " (default)" : "")], [a.who || "—"], used, [u.available && u.cycleEnd ? when(u.cycleEnd, s.now) : "—"]];
  }), "No accounts.");
  $("parked-count").textContent = "(" + s.parked.length + ")";
  fill($("parked"), s.parked.map((p) => [[p.model], [age(p.ageMs), "num"], [p.pendingToolCalls, "num"]]), "No turn is waiting for tool results.");
  $("requests-count").textContent = "(" + s.requests.length + ")";
  fill($("requests"), s.requests.map((r) => [
    [new Date(r.at).toLocaleTimeString()], [r.surface + (r.client ? " · " + r.client : "")], [(r.model || "—") + (r.params ? " · " + r.params : "")],
    [(r.route || "—") + (r.parked ? ", parked" : "")], [r.ttftMs === undefined ? "—" : r.ttftMs + " ms", "num"],
    [(r.tokens === undefined ? "—" : r.tokens) + (r.webSearches ? " · " + r.webSearches + " web search" + (r.webSearches > 1 ? "es" : "") : "") + (r.webRefused ? " · " + r.webRefused + " refused" : ""), "num"],
    [r.status + (r.errorCode ? " (" + r.errorCode + ")" : ""), "num " + (r.status >= 400 || r.streamError ? "bad" : "ok"), r.errorMessage || ""],
  ]), "No requests yet.");
  const models = $("models"); models.replaceChildren();
  $("models-count").textContent = "(" + s.models.length + ")";
  if (s.modelsError) models.append(el("li", "Could not list models: " + s.modelsError, "bad"));
  for (const m of s.models) { const li = el("li", m.id); li.title = m.name + (m.reasoning ? " · reasoning" : "") + (m.vision ? " · images" : ""); models.append(li); }
  $("keys-section").hidden = !Array.isArray(s.keys);
  if (Array.isArray(s.keys)) {
    $("keys-count").textContent = "(" + s.keys.length + ")";
    const usd = (n) => "$" + n.toFixed(n < 1 ? 4 : 2);
    const tokens = (k) => k.inputTokens + " in (" + k.cachedTokens + " cached) · " + k.outputTokens + " out (" + k.reasoningTokens + " reasoning)";
    fill($("keys"), s.keys.map((k) => {
      const f = k.budgetUsd ? k.spendUsd / k.budgetUsd : null;
      return [[k.keyName], [k.requests, "num"], [tokens(k), "num"],
        [usd(k.spendUsd) + (k.budgetUsd ? " of " + usd(k.budgetUsd) + " (" + (f * 100).toFixed(0) + "%)" : ""), "num" + (f === null ? "" : f >= 1 ? " bad" : f >= 0.8 ? " warn" : "")],
        [k.period + ", resets " + when(k.resetsAt, s.now)]];
    }), s.keysError ? "Could not read the key usage: " + s.keysError : "No key has made a request this period.");
  }
  $("updated").textContent = "Updated " + new Date(s.now).toLocaleTimeString();
  $("updated").className = "";
}
const STORED = "cursor-bridge-admin-key";
const adminKey = () => sessionStorage.getItem(STORED);
function signIn(message) {
  $("signin").hidden = false; $("content").hidden = true; $("signout").hidden = true;
  $("signin-error").textContent = message || "";
}
function signedIn() { $("signin").hidden = true; $("content").hidden = false; $("signout").hidden = !adminKey(); }
async function refresh() {
  if (!$("signin").hidden && !adminKey()) return;
  try {
    const key = adminKey();
    const res = await fetch("/status.json", { cache: "no-store", credentials: "same-origin", headers: key ? { authorization: "Bearer " + key } : {} });
    if (res.status === 401) { if (key) sessionStorage.removeItem(STORED); signIn(key ? "That key was not accepted: enter the admin key." : ""); return; }
    if (!res.ok) throw new Error("HTTP " + res.status);
    const snapshot = await res.json();
    signedIn(); render(snapshot);
  } catch (e) { $("updated").textContent = "Server not answering (" + e.message + "); retrying"; $("updated").className = "bad"; }
}
$("signin-button").addEventListener("click", () => {
  const key = $("admin-key").value.trim();
  if (!key) { $("signin-error").textContent = "Enter the admin key."; return; }
  sessionStorage.setItem(STORED, key); $("admin-key").value = ""; refresh();
});
$("admin-key").addEventListener("keydown", (e) => { if (e.key === "Enter") $("signin-button").click(); });
$("signout").addEventListener("click", () => { sessionStorage.removeItem(STORED); signIn(""); });
const initial = JSON.parse($("initial").textContent);
if (initial) { signedIn(); render(initial); } else if (adminKey()) refresh(); else signIn("");
setInterval(refresh, ${REFRESH_MS});
`;

/** The page for `snapshot` (null: the sign-in only), with `nonce` on its style and script elements. */
export function statusPageHtml(
  snapshot: StatusSnapshot | null,
  nonce: string,
  version = snapshot?.version ?? "",
): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cursor-bridge status</title>
<style nonce="${nonce}">${CSS}</style>
</head>
<body>
<header>
  <h1>cursor-bridge <small>${version.replace(/[^\w.+-]/g, "")}</small></h1>
  <span id="upstream" class="badge"></span>
  <span id="account"></span>
  <span id="upstream-url" class="muted"></span>
  <span id="updated"></span>
  <button id="signout" type="button" hidden>Sign out</button>
</header>
<section id="signin" hidden><h2>Admin sign-in</h2>
  <p>This cursor-bridge gives each person a key of their own; its status is for the admin. Enter the admin key: it is
  kept in this tab only (until the tab closes) and sent with the page's own requests.</p>
  <input id="admin-key" type="password" autocomplete="off" spellcheck="false" aria-label="Admin key">
  <button id="signin-button" type="button">Sign in</button>
  <p id="signin-error" class="bad"></p>
</section>
<main id="content" hidden>
  <section><h2>Plan usage</h2><div id="usage"></div></section>
  <section><h2>Parked turns <span id="parked-count"></span></h2>
    <table id="parked"><thead><tr><th>Model</th><th class="num">Waiting</th><th class="num">Tool calls</th></tr></thead><tbody></tbody></table>
  </section>
  <section id="accounts-section" class="wide" hidden><h2>Cursor accounts</h2>
    <table id="accounts"><thead><tr><th>Account</th><th>Who</th><th class="num">Plan usage</th><th>Resets</th></tr></thead><tbody></tbody></table>
  </section>
  <section class="wide"><h2>Last requests <span id="requests-count"></span></h2>
    <table id="requests"><thead><tr><th>Time</th><th>Client</th><th>Model</th><th>Route</th><th class="num">First token</th><th class="num">Tokens</th><th class="num">Status</th></tr></thead><tbody></tbody></table>
  </section>
  <section class="wide" id="keys-section" hidden><h2>Keys <span id="keys-count"></span></h2>
    <table id="keys"><thead><tr><th>Key</th><th class="num">Requests</th><th class="num">Tokens</th><th class="num">Spend</th><th>Period</th></tr></thead><tbody></tbody></table>
  </section>
  <section class="wide"><h2>Models <span id="models-count"></span></h2><ul id="models" class="chips"></ul></section>
</main>
<script id="initial" type="application/json">${scriptJson(snapshot)}</script>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}
