/**
 * Answers to `interaction_query` (docs/protocol.md §4.9): every query is answered with the same `id` (the server
 * waits otherwise), as current clients answer (cursor-protocol-addendum-2.md §7) where the bridge can: a mode switch
 * is approved and `create_plan` succeeds (empty `plan_uri`). Questions for the user are rejected with a reason
 * (cursor-bridge has no UI to ask one); web search and fetch approvals are rejected too until the server-tools work
 * decides them.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { InteractionQuery, InteractionResponseSchema } from "../gen/agent/v1/interaction_query_pb.js";

/** Reason given for every rejected interaction. */
export const INTERACTION_REJECTION_REASON =
  "Not supported by cursor-bridge: there is no interactive user; continue with the declared tools.";

/** The answer to `query`. */
export function answerInteractionQuery(
  query: InteractionQuery,
  reason: string = INTERACTION_REJECTION_REASON,
): MessageInitShape<typeof InteractionResponseSchema> {
  const rejected = { result: { case: "rejected" as const, value: { reason } } };
  const id = query.id;
  switch (query.query.case) {
    case "webSearchRequestQuery":
      return { id, result: { case: "webSearchRequestResponse", value: rejected } };
    case "switchModeRequestQuery":
      return { id, result: { case: "switchModeRequestResponse", value: { result: { case: "approved", value: {} } } } };
    case "exaSearchRequestQuery":
      return { id, result: { case: "exaSearchRequestResponse", value: rejected } };
    case "exaFetchRequestQuery":
      return { id, result: { case: "exaFetchRequestResponse", value: rejected } };
    case "webFetchRequestQuery":
      return { id, result: { case: "webFetchRequestResponse", value: rejected } };
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
