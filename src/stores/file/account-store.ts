/**
 * The file {@link AccountStore}. Layout under the config directory (every file 0600, every folder 0700):
 *
 * - `credentials.json`: the account `default`, the one record cursor-bridge always kept (unchanged);
 * - `accounts/<name>.json`: each named account's record, in the same format;
 * - `accounts.json`: `{"version":1,"default":"<name>"}`, only once another account was made the default.
 *
 * A file in `accounts/` whose name is not `<account name>.json` is ignored (and never touched).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ProxyError } from "../../util/errors.js";
import { makeDir } from "../../util/make-dir.js";
import { accountEntry, checkAccountName, isAccountName } from "../accounts.js";
import { type AccountEntry, type AccountStore, type CredentialStore, DEFAULT_ACCOUNT } from "../types.js";
import { writeFileAtomic } from "./atomic-write.js";
import { ACCOUNTS_DIR_NAME, createFileCredentialStore } from "./credential-store.js";

/** Options of {@link createFileAccountStore}. */
export interface FileAccountStoreOptions {
  configDir: string;
  /** @default process.platform */
  platform?: NodeJS.Platform;
  /** @default () => new Date() */
  now?: () => Date;
}

/** The file naming the default account. */
export const DEFAULT_ACCOUNT_FILE_NAME = "accounts.json";

function isMissing(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT";
}

/** Creates the store on `<configDir>`. */
export function createFileAccountStore(options: FileAccountStoreOptions): AccountStore {
  const { configDir } = options;
  const stores = new Map<string, CredentialStore>();
  const pointer = join(configDir, DEFAULT_ACCOUNT_FILE_NAME);
  const credentials = (account: string): CredentialStore => {
    checkAccountName(account);
    let store = stores.get(account);
    if (store === undefined) {
      store = createFileCredentialStore({
        configDir,
        account,
        ...(options.platform === undefined ? {} : { platform: options.platform }),
        ...(options.now === undefined ? {} : { now: options.now }),
      });
      stores.set(account, store);
    }
    return store;
  };

  const namedAccounts = async (): Promise<string[]> => {
    try {
      const files = await readdir(join(configDir, ACCOUNTS_DIR_NAME));
      return files
        .filter((file) => file.endsWith(".json"))
        .map((file) => file.slice(0, -".json".length))
        .filter((name) => isAccountName(name) && name !== DEFAULT_ACCOUNT);
    } catch (error) {
      if (isMissing(error)) return [];
      throw new ProxyError("internal", `Could not list the accounts in ${configDir}.`, { cause: error });
    }
  };

  return {
    location: configDir,
    credentials,
    async list() {
      const names = [DEFAULT_ACCOUNT, ...(await namedAccounts())].sort();
      const entries: AccountEntry[] = [];
      for (const name of names) {
        const record = await credentials(name).load();
        if (record !== undefined) entries.push(accountEntry(name, record));
      }
      return entries;
    },
    async defaultAccount() {
      let text: string;
      try {
        text = await readFile(pointer, "utf8");
      } catch (error) {
        if (isMissing(error)) return DEFAULT_ACCOUNT;
        throw new ProxyError("internal", `Could not read ${pointer}.`, { cause: error });
      }
      let name: unknown;
      try {
        name = (JSON.parse(text) as { default?: unknown }).default;
      } catch {
        name = undefined;
      }
      if (typeof name === "string" && isAccountName(name)) return name;
      throw new ProxyError(
        "invalid_request",
        `${pointer} does not name a default account: fix it, or delete it to make \`default\` the default account again.`,
        { detail: "invalid_config" },
      );
    },
    async setDefaultAccount(account) {
      checkAccountName(account);
      await makeDir(configDir);
      await writeFileAtomic(pointer, `${JSON.stringify({ version: 1, default: account }, null, 2)}\n`);
    },
  };
}
