/**
 * Answers to `interaction_query` (docs/protocol.md §4.9): every query is answered with the same `id` (the server
 * waits otherwise). cursor-bridge has no UI to ask the user, so approvals are rejected with a reason, as CARL does.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { InteractionQuery, InteractionResponseSchema } from "../gen/agent/v1/interaction_query_pb.js";

/** Reason given for every rejected interaction. */
export const INTERACTION_REJECTION_REASON =
  "Not supported by cursor-bridge: there is no interactive user; continue with the declared tools.";

/** The rejection answering `query`. */
export function rejectInteractionQuery(
  query: InteractionQuery,
  reason: string = INTERACTION_REJECTION_REASON,
): MessageInitShape<typeof InteractionResponseSchema> {
  const rejected = { result: { case: "rejected" as const, value: { reason } } };
  const id = query.id;
  switch (query.query.case) {
    case "webSearchRequestQuery":
      return { id, result: { case: "webSearchRequestResponse", value: rejected } };
    case "switchModeRequestQuery":
      return { id, result: { case: "switchModeRequestResponse", value: rejected } };
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
          value: { result: { result: { case: "error", value: { error: reason } } } },
        },
      };
    case "setupVmEnvironmentArgs":
      return { id, result: { case: "setupVmEnvironmentResult", value: {} } };
    case undefined:
      return { id };
  }
}
