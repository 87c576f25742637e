import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { createModelCatalogue } from "../../emulator/models.js";
import {
  type AvailableModel,
  type AvailableModelsResponse,
  AvailableModelsResponseSchema,
} from "../../gen/aiserver/v1/ai_service_pb.js";
import { type AvailableModelRow, decodeAvailableModels } from "./available-models.js";

/** What the catalogue reads of a model decoded by protobuf-es. */
function rowOf(model: AvailableModel): AvailableModelRow {
  const optional = <T>(key: string, value: T | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    name: model.name,
    ...optional("supportsImages", model.supportsImages),
    ...optional("contextTokenLimit", model.contextTokenLimit),
    ...optional("contextTokenLimitForMaxMode", model.contextTokenLimitForMaxMode),
    ...optional("clientDisplayName", model.clientDisplayName),
    idAliases: [...model.idAliases],
    parameterDefinitions: model.parameterDefinitions.map((d) => ({
      id: d.id,
      ...optional(
        "parameterType",
        d.parameterType === undefined
          ? undefined
          : {
              type:
                d.parameterType.type.case === undefined
                  ? { case: undefined }
                  : d.parameterType.type.case === "booleanParameter"
                    ? {
                        case: "booleanParameter",
                        value: { values: d.parameterType.type.value.values.map((v) => ({ value: v.value })) },
                      }
                    : {
                        case: "enumParameter",
                        value: { values: d.parameterType.type.value.values.map((v) => ({ value: v.value })) },
                      },
            },
      ),
    })),
    variants: model.variants.map((v) => ({
      parameterValues: v.parameterValues.map((p) => ({ id: p.id, value: p.value })),
      ...optional("displayName", v.displayName),
      ...optional("isMaxMode", v.isMaxMode),
      ...optional("isDefaultNonMaxConfig", v.isDefaultNonMaxConfig),
      ...optional("variantStringRepresentation", v.variantStringRepresentation),
      ...optional("legacySlug", v.legacySlug),
    })),
  } as AvailableModelRow;
}

/** The answer's bytes as the client receives them: unknown fields of google.protobuf.Empty. */
const received = (answer: AvailableModelsResponse) =>
  fromBinary(EmptySchema, toBinary(AvailableModelsResponseSchema, answer));

describe("AvailableModels read from the wire for the catalogue", () => {
  it("reads the emulator's whole catalogue as protobuf-es decodes it", () => {
    const answer = createModelCatalogue().available(true);
    const rows = decodeAvailableModels(received(answer));
    const reference = fromBinary(AvailableModelsResponseSchema, toBinary(AvailableModelsResponseSchema, answer));
    expect(rows.length).toBeGreaterThan(30);
    expect(rows).toEqual(reference.models.map(rowOf));
    expect(rows.some((r) => r.variants.length > 0 && r.parameterDefinitions.length > 0)).toBe(true);
  });

  it("keeps default values (false, empty string), absent optionals, and skips fields it does not read", () => {
    const answer = create(AvailableModelsResponseSchema, {
      modelNames: ["m"],
      models: [
        {
          name: "m",
          supportsImages: false,
          contextTokenLimit: 0,
          price: 1.5,
          tooltipData: "skipped",
          isHidden: true,
          idAliases: ["", "alias"],
          parameterDefinitions: [
            {
              id: "thinking",
              markdownTooltip: "skipped",
              parameterType: {
                type: {
                  case: "booleanParameter",
                  value: { values: [{ value: false }, { value: true, displayName: "On" }] },
                },
              },
            },
            {
              id: "effort",
              parameterType: { type: { case: "enumParameter", value: { values: [{ value: "" }, { value: "high" }] } } },
            },
            { id: "bare" },
            { id: "empty-type", parameterType: {} },
          ],
          variants: [{ parameterValues: [{ id: "thinking", value: "" }], isMaxMode: false, tagline: "skipped" }, {}],
        },
        { name: "" },
      ],
    });
    const rows = decodeAvailableModels(received(answer));
    expect(rows).toEqual(
      fromBinary(AvailableModelsResponseSchema, toBinary(AvailableModelsResponseSchema, answer)).models.map(rowOf),
    );
    expect(rows[0]?.supportsImages).toBe(false);
    expect(rows[0]?.clientDisplayName).toBeUndefined();
  });

  it("throws on a truncated or malformed answer, as protobuf-es's decoding does", () => {
    const bytes = toBinary(AvailableModelsResponseSchema, createModelCatalogue().available(true));
    const message = fromBinary(EmptySchema, bytes);
    const unknown = message.$unknown ?? [];
    const model = unknown.find((f) => f.no === 2);
    if (model === undefined) throw new Error("no model in the answer");
    // The model's length says more bytes than it holds.
    const truncated = { ...model, data: model.data.subarray(0, model.data.length - 3) };
    expect(() => decodeAvailableModels({ ...message, $unknown: [truncated] })).toThrow();
    // The models field as a varint.
    expect(() =>
      decodeAvailableModels({ ...message, $unknown: [{ no: 2, wireType: 0, data: new Uint8Array([1]) }] }),
    ).toThrow();
  });
});
