import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InteractionQuerySchema, InteractionResponseSchema } from "../gen/agent/v1/interaction_query_pb.js";
import { WebFetchToolCallSchema, WebSearchToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import { answerInteractionQuery, INTERACTION_REJECTION_REASON } from "./interaction-query.js";
import { WebToolPolicy, webFetchEvent, webSearchEvent } from "./web-tools.js";

function searchAnswer(policy: WebToolPolicy | undefined, searchTerm: string) {
  const query = create(InteractionQuerySchema, {
    id: 9,
    query: { case: "webSearchRequestQuery", value: { args: { searchTerm, toolCallId: "t1" } } },
  });
  const response = create(
    InteractionResponseSchema,
    answerInteractionQuery(query, INTERACTION_REJECTION_REASON, policy),
  );
  expect(response.id).toBe(9);
  expect(response.result.case).toBe("webSearchRequestResponse");
  return (response.result.value as { result: { case: string; value: { reason?: string } } }).result;
}

function fetchAnswer(policy: WebToolPolicy, url: string) {
  const query = create(InteractionQuerySchema, {
    id: 2,
    query: { case: "webFetchRequestQuery", value: { args: { url } } },
  });
  const response = create(
    InteractionResponseSchema,
    answerInteractionQuery(query, INTERACTION_REJECTION_REASON, policy),
  );
  expect(response.result.case).toBe("webFetchRequestResponse");
  return (response.result.value as { result: { case: string; value: { reason?: string } } }).result;
}

describe("web tool policy", () => {
  it("rejects a search when no search tool was offered, with a reason", () => {
    const answer = searchAnswer(new WebToolPolicy(undefined), "weather");
    expect(answer.case).toBe("rejected");
    expect(answer.value.reason).toMatch(/offered no web search tool/);
    expect(searchAnswer(undefined, "weather").case).toBe("rejected");
    const fetchOnly = new WebToolPolicy({ webFetch: {} });
    expect(searchAnswer(fetchOnly, "weather").case).toBe("rejected");
  });

  it("approves offered searches up to max_uses, then rejects the next", () => {
    const policy = new WebToolPolicy({ webSearch: { maxUses: 2 } });
    expect(searchAnswer(policy, "a").case).toBe("approved");
    expect(searchAnswer(policy, "b").case).toBe("approved");
    const third = searchAnswer(policy, "c");
    expect(third.case).toBe("rejected");
    expect(third.value.reason).toMatch(/max_uses 2/);
    expect(policy.searchCount).toBe(2);
  });

  it("refuses site: operators outside the allowed domains or inside the blocked ones", () => {
    const allowed = new WebToolPolicy({ webSearch: { allowedDomains: ["example.com"] } });
    expect(searchAnswer(allowed, "site:docs.example.com node").case).toBe("approved");
    expect(searchAnswer(allowed, "node site:evil.test").case).toBe("rejected");
    const blocked = new WebToolPolicy({ webSearch: { blockedDomains: ["evil.test"] } });
    expect(searchAnswer(blocked, "plain query").case).toBe("approved");
    const refused = searchAnswer(blocked, "x site:www.evil.test");
    expect(refused.case).toBe("rejected");
    expect(refused.value.reason).toMatch(/www\.evil\.test is blocked/);
  });

  it("approves fetches of offered, in-domain http(s) URLs only", () => {
    const policy = new WebToolPolicy({ webFetch: { blockedDomains: ["blocked.test"], maxUses: 1 } });
    expect(fetchAnswer(policy, "file:///etc/passwd").case).toBe("rejected");
    expect(fetchAnswer(policy, "https://sub.blocked.test/a").case).toBe("rejected");
    expect(fetchAnswer(policy, "https://ok.test/a").case).toBe("approved");
    expect(fetchAnswer(policy, "https://ok.test/b").value.reason).toMatch(/max_uses 1/);
    expect(fetchAnswer(new WebToolPolicy({ webSearch: {} }), "https://ok.test/").case).toBe("rejected");
  });

  it("turns completed web tool calls into events, dropping results outside the domain limits", () => {
    const policy = new WebToolPolicy({ webSearch: { blockedDomains: ["blocked.test"] } });
    const call = create(WebSearchToolCallSchema, {
      args: { searchTerm: "q", toolCallId: "tool_1" },
      result: {
        result: {
          case: "success",
          value: {
            references: [
              { title: "A", url: "https://a.test/1", chunk: "alpha" },
              { title: "B", url: "https://blocked.test/2", chunk: "beta" },
            ],
          },
        },
      },
    });
    expect(webSearchEvent("call_1", call, policy)).toEqual({
      type: "web-search",
      toolCallId: "tool_1",
      query: "q",
      status: "completed",
      references: [{ title: "A", url: "https://a.test/1", chunk: "alpha" }],
      error: "",
    });
    const rejected = create(WebSearchToolCallSchema, {
      args: { searchTerm: "q" },
      result: { result: { case: "rejected", value: { reason: "no" } } },
    });
    expect(webSearchEvent("call_2", rejected, policy)).toMatchObject({
      toolCallId: "call_2",
      status: "rejected",
      error: "no",
    });
    const fetched = create(WebFetchToolCallSchema, {
      args: { url: "https://a.test/" },
      result: { result: { case: "success", value: { url: "https://a.test/", markdown: "# A" } } },
    });
    expect(webFetchEvent("call_3", fetched, new WebToolPolicy({ webFetch: {} }))).toEqual({
      type: "web-fetch",
      toolCallId: "call_3",
      url: "https://a.test/",
      status: "completed",
      markdown: "# A",
      error: "",
    });
    // A search policy offers no fetch: the event says so, and no surface shows it.
    expect(webFetchEvent("call_3", fetched, policy)).toMatchObject({ offered: false });
    expect(webSearchEvent("call_2", rejected, new WebToolPolicy(undefined))).toMatchObject({ offered: false });
  });
});
