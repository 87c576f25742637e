import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GetUsableModelsResponseSchema } from "../gen/agent/v1/models_pb.js";
import { AvailableModelsResponseSchema } from "../gen/aiserver/v1/ai_service_pb.js";
import { parseCatalogueFile } from "./catalogue.js";
import { DEFAULT_AVAILABLE_MODELS_BASE64, DEFAULT_USABLE_MODELS_BASE64 } from "./default-available-models.js";
import { createModelCatalogue, freshDefaultAvailableModels, freshDefaultUsableModels } from "./models.js";

describe("the built-in catalogue's AvailableModels answer encoded at build time", () => {
  it("is the fresh encoding of the built-in catalogue (else: npx tsx tools/emulator-catalogue.ts)", () => {
    expect(Buffer.from(DEFAULT_AVAILABLE_MODELS_BASE64, "base64").equals(freshDefaultAvailableModels())).toBe(true);
  });

  it("encodes to exactly those bytes and decodes to the fresh answer", () => {
    const catalogue = createModelCatalogue();
    const bytes = toBinary(AvailableModelsResponseSchema, catalogue.availableBinary());
    expect(Buffer.from(bytes).equals(Buffer.from(DEFAULT_AVAILABLE_MODELS_BASE64, "base64"))).toBe(true);
    const decoded = fromBinary(AvailableModelsResponseSchema, bytes);
    expect(decoded).toEqual(catalogue.available(true));
    expect(decoded.models.length).toBeGreaterThan(30);
  });

  it("is not used when --models or --catalogue change the catalogue", () => {
    const withModels = createModelCatalogue(["acme-9-pro"]);
    const decoded = fromBinary(
      AvailableModelsResponseSchema,
      toBinary(AvailableModelsResponseSchema, withModels.availableBinary()),
    );
    expect(decoded.modelNames).toContain("acme-9-pro");
    expect(decoded).toEqual(withModels.available(true));
    const file = parseCatalogueFile(
      JSON.stringify({ models: [{ id: "acme-2", parameters: [{ id: "turbo", values: ["false", "true"] }] }] }),
    );
    const withCatalogue = createModelCatalogue(file.ids, file.bases);
    const names = fromBinary(
      AvailableModelsResponseSchema,
      toBinary(AvailableModelsResponseSchema, withCatalogue.availableBinary()),
    ).models.map((m) => m.name);
    expect(names).toContain("acme-2");
  });
});

describe("the built-in catalogue's GetUsableModels answer encoded at build time", () => {
  it("is the fresh encoding of the built-in catalogue (else: npx tsx tools/emulator-catalogue.ts)", () => {
    expect(Buffer.from(DEFAULT_USABLE_MODELS_BASE64, "base64").equals(freshDefaultUsableModels())).toBe(true);
  });

  it("encodes to exactly those bytes and decodes to the fresh answer", () => {
    const catalogue = createModelCatalogue();
    const bytes = toBinary(GetUsableModelsResponseSchema, catalogue.usableBinary());
    expect(Buffer.from(bytes).equals(Buffer.from(DEFAULT_USABLE_MODELS_BASE64, "base64"))).toBe(true);
    const decoded = fromBinary(GetUsableModelsResponseSchema, bytes);
    expect(decoded).toEqual(catalogue.usableResponse());
    expect(decoded.models.length).toBeGreaterThan(30);
  });

  it("is not used when --models or --catalogue change the catalogue", () => {
    const withModels = createModelCatalogue(["acme-9-pro"]);
    const decoded = fromBinary(
      GetUsableModelsResponseSchema,
      toBinary(GetUsableModelsResponseSchema, withModels.usableBinary()),
    );
    expect(decoded.models.map((m) => m.modelId)).toContain("acme-9-pro");
    expect(decoded).toEqual(withModels.usableResponse());
    const file = parseCatalogueFile(
      JSON.stringify({ models: [{ id: "acme-2", parameters: [{ id: "turbo", values: ["false", "true"] }] }] }),
    );
    const withCatalogue = createModelCatalogue(file.ids, file.bases);
    const ids = fromBinary(
      GetUsableModelsResponseSchema,
      toBinary(GetUsableModelsResponseSchema, withCatalogue.usableBinary()),
    ).models.map((m) => m.modelId);
    expect(ids.some((id) => id.startsWith("acme-2"))).toBe(true);
  });
});
