import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InteractionQuerySchema, InteractionResponseSchema } from "../gen/agent/v1/interaction_query_pb.js";
import { answerInteractionQuery, INTERACTION_REJECTION_REASON } from "./interaction-query.js";

// §4.9: the response oneof uses the same field numbers as the query oneof (2..9), so each query case has one answer.
const QUERY_CASES = [
  "webSearchRequestQuery",
  "askQuestionInteractionQuery",
  "switchModeRequestQuery",
  "exaSearchRequestQuery",
  "exaFetchRequestQuery",
  "createPlanRequestQuery",
  "setupVmEnvironmentArgs",
  "webFetchRequestQuery",
] as const;

describe("interaction queries", () => {
  it("answers every query case with the same id and the response case of the same field number", () => {
    const queryFields = InteractionQuerySchema.oneofs[0]!.fields;
    const responseFields = InteractionResponseSchema.oneofs[0]!.fields;
    expect(queryFields.map((f) => f.localName).sort()).toEqual([...QUERY_CASES].sort());
    for (const queryCase of QUERY_CASES) {
      const query = create(InteractionQuerySchema, { id: 7, query: { case: queryCase, value: {} } });
      const response = create(InteractionResponseSchema, answerInteractionQuery(query));
      expect(response.id).toBe(7);
      const queryNumber = queryFields.find((f) => f.localName === queryCase)?.number;
      const responseNumber = responseFields.find((f) => f.localName === response.result.case)?.number;
      expect(responseNumber, queryCase).toBe(queryNumber);
    }
  });

  it("approves a mode switch and answers create_plan with success, as current clients do (addendum 2 §7)", () => {
    const mode = create(InteractionQuerySchema, { id: 4, query: { case: "switchModeRequestQuery", value: {} } });
    expect(create(InteractionResponseSchema, answerInteractionQuery(mode)).result).toMatchObject({
      case: "switchModeRequestResponse",
      value: { result: { case: "approved" } },
    });
    const plan = create(InteractionQuerySchema, { id: 5, query: { case: "createPlanRequestQuery", value: {} } });
    expect(create(InteractionResponseSchema, answerInteractionQuery(plan)).result).toMatchObject({
      case: "createPlanRequestResponse",
      value: { result: { result: { case: "success" }, planUri: "" } },
    });
  });

  it("rejects web search approvals and questions with a reason", () => {
    const query = create(InteractionQuerySchema, {
      id: 3,
      query: { case: "webSearchRequestQuery", value: { args: { searchTerm: "x" } } },
    });
    const response = create(InteractionResponseSchema, answerInteractionQuery(query));
    expect(response.result.case).toBe("webSearchRequestResponse");
    const value = response.result.value as { result: { case: string; value: { reason: string } } };
    expect(value.result.case).toBe("rejected");
    expect(value.result.value.reason).toBe(INTERACTION_REJECTION_REASON);
  });
});
