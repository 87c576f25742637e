/**
 * `aiserver.v1.AiService/AvailableModels` with `use_model_parameters` (docs/protocol.md §6.1), read for the model
 * catalogue: only the fields the bridge uses, straight from the wire (field numbers from
 * proto/aiserver/v1/ai_service.proto and agent/v1/models.proto). protobuf-es's reflective decoding of the whole
 * answer (about 486 messages of up to 30 fields each, every one created with all its defaults, in code that is still
 * cold when a start's first turn asks) cost that first turn about 15 ms of CPU. The answer arrives as the unknown
 * fields of an empty message (connect-es parses the response with the method's output schema, here
 * google.protobuf.Empty) and is read here with protobuf-es's own BinaryReader; the rows keep the generated types'
 * shapes, so a decoded `AvailableModel` is a row too. A malformed answer throws, as protobuf-es's decoding does.
 */
import type { Message } from "@bufbuild/protobuf";
import type { GenService } from "@bufbuild/protobuf/codegenv2";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import { AiService, type AvailableModelsRequestSchema } from "../../gen/aiserver/v1/ai_service_pb.js";

/** A parameter's type as a row keeps it (the oneof of ModelParameterType). */
export type AvailableParameterType =
  | { case: "booleanParameter"; value: { values: { value: boolean }[] } }
  | { case: "enumParameter"; value: { values: { value: string }[] } }
  | { case: undefined; value?: undefined };

/** ModelVariantConfig: the fields the catalogue reads. */
export interface AvailableVariantRow {
  parameterValues: { id: string; value: string }[];
  displayName?: string | undefined;
  isMaxMode?: boolean | undefined;
  isDefaultNonMaxConfig?: boolean | undefined;
  variantStringRepresentation?: string | undefined;
  legacySlug?: string | undefined;
}

/** AvailableModel: the fields the catalogue reads. */
export interface AvailableModelRow {
  name: string;
  supportsImages?: boolean | undefined;
  contextTokenLimit?: number | undefined;
  contextTokenLimitForMaxMode?: number | undefined;
  clientDisplayName?: string | undefined;
  idAliases: string[];
  parameterDefinitions: { id: string; parameterType?: { type: AvailableParameterType } | undefined }[];
  variants: AvailableVariantRow[];
}

const availableModels = AiService.method.availableModels;
const rawAvailableModels = { ...availableModels, output: EmptySchema };

/** AiService with AvailableModels answered undecoded (as unknown fields of google.protobuf.Empty). */
export const RawAvailableModelsService = {
  ...AiService,
  methods: [rawAvailableModels],
  method: { availableModels: rawAvailableModels },
} as unknown as GenService<{
  availableModels: { methodKind: "unary"; input: typeof AvailableModelsRequestSchema; output: typeof EmptySchema };
}>;

/** The models of an AvailableModels answer received as unknown fields (RawAvailableModelsService). */
export function decodeAvailableModels(answer: Message): AvailableModelRow[] {
  const models: AvailableModelRow[] = [];
  for (const field of answer.$unknown ?? []) {
    if (field.no !== 2) continue;
    if (field.wireType !== WireType.LengthDelimited) throw new Error("AvailableModelsResponse.models: wrong wire type");
    const reader = new BinaryReader(field.data);
    const length = reader.uint32();
    models.push(readModel(reader, reader.pos + length));
  }
  return models;
}

/** Reads fields up to `end`, calling `read` for each (its wire type checked), skipping the others. */
function readFields(reader: BinaryReader, end: number, read: (no: number, wireType: WireType) => boolean): void {
  while (reader.pos < end) {
    const [no, wireType] = reader.tag();
    if (!read(no, wireType)) reader.skip(wireType, no);
  }
  if (reader.pos !== end) throw new Error("AvailableModelsResponse: a message overruns its length");
}

function expect(wireType: WireType, wanted: WireType): true {
  if (wireType !== wanted) throw new Error("AvailableModelsResponse: wrong wire type");
  return true;
}

const LEN = WireType.LengthDelimited;
const VARINT = WireType.Varint;

/** A length-delimited submessage read by `read` from the reader's position. */
function sub<T>(reader: BinaryReader, read: (reader: BinaryReader, end: number) => T): T {
  const length = reader.uint32();
  return read(reader, reader.pos + length);
}

function readModel(reader: BinaryReader, end: number): AvailableModelRow {
  const model: AvailableModelRow = { name: "", idAliases: [], parameterDefinitions: [], variants: [] };
  readFields(reader, end, (no, wt) => {
    switch (no) {
      case 1:
        model.name = expect(wt, LEN) && reader.string();
        return true;
      case 10:
        model.supportsImages = expect(wt, VARINT) && reader.bool();
        return true;
      case 15:
        model.contextTokenLimit = expect(wt, VARINT) && reader.int32();
        return true;
      case 16:
        model.contextTokenLimitForMaxMode = expect(wt, VARINT) && reader.int32();
        return true;
      case 17:
        model.clientDisplayName = expect(wt, LEN) && reader.string();
        return true;
      case 29:
        model.parameterDefinitions.push(expect(wt, LEN) && sub(reader, readDefinition));
        return true;
      case 30:
        model.variants.push(expect(wt, LEN) && sub(reader, readVariant));
        return true;
      case 37:
        model.idAliases.push(expect(wt, LEN) && reader.string());
        return true;
      default:
        return false;
    }
  });
  return model;
}

function readDefinition(reader: BinaryReader, end: number): AvailableModelRow["parameterDefinitions"][number] {
  const definition: AvailableModelRow["parameterDefinitions"][number] = { id: "" };
  readFields(reader, end, (no, wt) => {
    if (no === 1) definition.id = expect(wt, LEN) && reader.string();
    else if (no === 4) {
      // A message field seen twice merges (protobuf): a second oneof case replaces the first, the same one appends.
      const type = expect(wt, LEN) && sub(reader, (r, e) => readParameterType(r, e, definition.parameterType?.type));
      definition.parameterType = { type };
    } else return false;
    return true;
  });
  return definition;
}

function readParameterType(
  reader: BinaryReader,
  end: number,
  merged: AvailableParameterType | undefined,
): AvailableParameterType {
  let type: AvailableParameterType = merged ?? { case: undefined };
  readFields(reader, end, (no, wt) => {
    if (no === 1) {
      const values = type.case === "booleanParameter" ? type.value.values : [];
      expect(wt, LEN) && sub(reader, (r, e) => readValues(r, e, values, (v) => v.bool(), false, VARINT));
      type = { case: "booleanParameter", value: { values } };
    } else if (no === 2) {
      const values = type.case === "enumParameter" ? type.value.values : [];
      expect(wt, LEN) && sub(reader, (r, e) => readValues(r, e, values, (v) => v.string(), "", LEN));
      type = { case: "enumParameter", value: { values } };
    } else return false;
    return true;
  });
  return type;
}

/**
 * BooleanModelParameter / EnumModelParameter: `repeated … values = 1`, each value message's field 1 read by `read`
 * (a default value, false or "", is absent from the wire: the message still adds one entry).
 */
function readValues<T>(
  reader: BinaryReader,
  end: number,
  values: { value: T }[],
  read: (reader: BinaryReader) => T,
  fallback: T,
  wireType: WireType,
): void {
  readFields(reader, end, (no, wt) => {
    if (no !== 1) return false;
    expect(wt, LEN);
    let value = fallback;
    sub(reader, (r, e) =>
      readFields(r, e, (n, w) => {
        if (n !== 1) return false;
        value = expect(w, wireType) && read(r);
        return true;
      }),
    );
    values.push({ value });
    return true;
  });
}

function readVariant(reader: BinaryReader, end: number): AvailableVariantRow {
  const variant: AvailableVariantRow = { parameterValues: [] };
  readFields(reader, end, (no, wt) => {
    switch (no) {
      case 1:
        variant.parameterValues.push(expect(wt, LEN) && sub(reader, readParameterValue));
        return true;
      case 2:
        variant.displayName = expect(wt, LEN) && reader.string();
        return true;
      case 3:
        variant.isMaxMode = expect(wt, VARINT) && reader.bool();
        return true;
      case 5:
        variant.isDefaultNonMaxConfig = expect(wt, VARINT) && reader.bool();
        return true;
      case 9:
        variant.variantStringRepresentation = expect(wt, LEN) && reader.string();
        return true;
      case 11:
        variant.legacySlug = expect(wt, LEN) && reader.string();
        return true;
      default:
        return false;
    }
  });
  return variant;
}

function readParameterValue(reader: BinaryReader, end: number): { id: string; value: string } {
  const parameter = { id: "", value: "" };
  readFields(reader, end, (no, wt) => {
    if (no === 1) parameter.id = expect(wt, LEN) && reader.string();
    else if (no === 2) parameter.value = expect(wt, LEN) && reader.string();
    else return false;
    return true;
  });
  return parameter;
}
