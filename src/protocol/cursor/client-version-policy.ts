/**
 * `GetServerConfig`'s client version policy (cursor-protocol-addendum-3.md E13) in the healer's terms. Apart from
 * client-version-heal.ts because it loads generated protobuf code, which `serve`'s listening path must not.
 */
import { ClientUpdateLevel, type GetServerConfigResponse } from "../../gen/aiserver/v1/server_config_pb.js";
import type { ServerVersionPolicy } from "./client-version-heal.js";

/** The policy Cursor sent; undefined when it sent none. */
export function policyOf(response: GetServerConfigResponse): ServerVersionPolicy | undefined {
  const status = response.clientVersionStatus;
  if (status === undefined) return undefined;
  return {
    minSupported: status.minSupportedClientVersion,
    minAllowed: status.minAllowedClientVersion,
    current: status.currentClientVersion,
    updateRequired: status.updateLevel === ClientUpdateLevel.REQUIRED,
  };
}
