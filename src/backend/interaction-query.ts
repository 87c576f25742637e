/**
 * Answers to `interaction_query` (docs/protocol.md §4.9): every query is answered with the same `id` (the server
 * waits otherwise), as current clients answer (cursor-protocol-addendum-2.md §7) where the bridge can: a mode switch
 * is approved (unless the turn's surface executor decides it, {@link modeSwitchRequestOf}) and `create_plan`
 * succeeds (empty `plan_uri`). Questions for the user are rejected with a reason
 * (cursor-bridge has no UI to ask one). Web search and fetch are approved only when the request offered the tool,
 * within its limits ({@link WebToolPolicy}); Cursor then runs them on its servers.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  ApprovalResponseSchema,
  InteractionQuery,
  InteractionResponseSchema,
  SwitchModeRequestQuery,
} from "../gen/agent/v1/interaction_query_pb.js";
import type { ModeSwitchRequest, ModeSwitchVerdict } from "./types.js";
import type { WebToolPolicy, WebVerdict } from "./web-tools.js";

/** Reason given for every rejected interaction. */
export const INTERACTION_REJECTION_REASON =
  "Not supported by cursor-bridge: there is no interactive user; continue with the declared tools.";

/** A mode switch query as plain data, for the surface executor that decides it. */
export function modeSwitchRequestOf(query: SwitchModeRequestQuery): ModeSwitchRequest {
  return {
    targetModeId: query.args?.targetModeId ?? "",
    explanation: query.args?.explanation ?? "",
    toolCallId: query.args?.toolCallId ?? "",
  };
}

/** The answer to mode switch query `id` once decided. */
export function modeSwitchAnswer(
  id: number,
  verdict: ModeSwitchVerdict,
): MessageInitShape<typeof InteractionResponseSchema> {
  const value: MessageInitShape<typeof ApprovalResponseSchema> = verdict.approved
    ? { result: { case: "approved", value: {} } }
    : { result: { case: "rejected", value: { reason: verdict.reason } } };
  return { id, result: { case: "switchModeRequestResponse", value } };
}

/** The answer to `query`. */
export function answerInteractionQuery(
  query: InteractionQuery,
  reason: string = INTERACTION_REJECTION_REASON,
  web?: WebToolPolicy,
): MessageInitShape<typeof InteractionResponseSchema> {
  const rejected = { result: { case: "rejected" as const, value: { reason } } };
  const verdict = (v: WebVerdict): MessageInitShape<typeof ApprovalResponseSchema> =>
    v.approved
      ? { result: { case: "approved" as const, value: {} } }
      : { result: { case: "rejected" as const, value: { reason: v.reason } } };
  const id = query.id;
  switch (query.query.case) {
    case "webSearchRequestQuery": {
      const value = web === undefined ? rejected : verdict(web.search(query.query.value.args?.searchTerm ?? ""));
      return { id, result: { case: "webSearchRequestResponse", value } };
    }
    case "switchModeRequestQuery":
      return modeSwitchAnswer(id, { approved: true });
    case "exaSearchRequestQuery":
      return { id, result: { case: "exaSearchRequestResponse", value: rejected } };
    case "exaFetchRequestQuery":
      return { id, result: { case: "exaFetchRequestResponse", value: rejected } };
    case "webFetchRequestQuery": {
      const value = web === undefined ? rejected : verdict(web.fetch(query.query.value.args?.url ?? ""));
      return { id, result: { case: "webFetchRequestResponse", value } };
    }
    case "askQuestionInteractionQuery":
      return { id, result: { case: "askQuestionInteractionResponse", value: { result: rejected } } };
    case "createPlanRequestQuery":
      return {
        id,
        result: {
          case: "createPlanRequestResponse",
          value: { result: { result: { case: "success", value: {} }, planUri: "" } },
        },
      };
    case "setupVmEnvironmentArgs":
      return { id, result: { case: "setupVmEnvironmentResult", value: {} } };
    case undefined:
      return { id };
  }
}
