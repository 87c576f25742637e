import initSqlJs, { type Database, type SqlJsStatic } from "sql.js";
import { beforeAll, describe, expect, it } from "vitest";
import { readSqliteTable, SqliteFormatError } from "./sqlite-table.js";

// Databases are written by real SQLite (sql.js, a dev dependency) and read back with the reader under test.
let SQL: SqlJsStatic;
beforeAll(async () => {
  SQL = await initSqlJs();
});

function database(pragmas: string[], build: (db: Database) => void): Uint8Array {
  const db = new SQL.Database();
  for (const pragma of pragmas) db.run(pragma);
  build(db);
  const bytes = db.export();
  db.close();
  return bytes;
}

/** What SQLite itself returns for `SELECT * FROM table ORDER BY rowid`, in the reader's value types. */
function expected(bytes: Uint8Array, table: string): unknown[][] {
  const db = new SQL.Database(bytes);
  try {
    const [result] = db.exec(`SELECT * FROM ${table} ORDER BY rowid`);
    return result?.values ?? [];
  } finally {
    db.close();
  }
}

describe("readSqliteTable", () => {
  it("reads an ItemTable like the Cursor IDE's, TEXT and BLOB values", () => {
    const bytes = database([], (db) => {
      db.run("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)");
      db.run("INSERT INTO ItemTable VALUES (?, ?)", ["cursorAuth/accessToken", "tok-é-✓"]);
      db.run("INSERT INTO ItemTable VALUES (?, ?)", ["blob", new Uint8Array([0, 1, 2, 255])]);
      db.run("INSERT INTO ItemTable VALUES (?, ?)", ["null", null]);
    });
    expect(readSqliteTable(bytes, "ItemTable")).toEqual([
      ["cursorAuth/accessToken", "tok-é-✓"],
      ["blob", new Uint8Array([0, 1, 2, 255])],
      ["null", null],
    ]);
    expect(readSqliteTable(bytes, "itemtable")).toHaveLength(3);
    expect(readSqliteTable(bytes, "Missing")).toBeUndefined();
  });

  it("matches SQLite across interior pages, overflow chains, page sizes and number types", () => {
    for (const pageSize of [512, 4096, 65_536]) {
      const bytes = database([`PRAGMA page_size=${pageSize}`], (db) => {
        db.run("CREATE TABLE other (x)");
        db.run("CREATE TABLE t (k TEXT, v, n)");
        const numbers = [0, 1, -1, 127, -129, 40_000, -8_388_609, 2 ** 31, -(2 ** 40), 2 ** 52, 1.5, -0.25];
        for (let i = 0; i < 600; i++) {
          // Every 50th value is large enough to spill into overflow pages at every page size.
          const value = i % 50 === 0 ? "x".repeat(70_000 + i) : `value ${i}`;
          db.run("INSERT INTO t VALUES (?, ?, ?)", [`key ${i}`, value, numbers[i % numbers.length] ?? null]);
        }
      });
      const rows = readSqliteTable(bytes, "t");
      expect(rows).toHaveLength(600);
      expect(rows).toEqual(expected(bytes, "t"));
    }
  });

  it("decodes UTF-16 databases", () => {
    const bytes = database(["PRAGMA encoding='UTF-16le'"], (db) => {
      db.run("CREATE TABLE ItemTable (key TEXT, value BLOB)");
      db.run("INSERT INTO ItemTable VALUES ('cursorAuth/cachedEmail', 'ü@example.com')");
    });
    expect(readSqliteTable(bytes, "ItemTable")).toEqual([["cursorAuth/cachedEmail", "ü@example.com"]]);
  });

  it("throws SqliteFormatError for bytes that are not a sound database, never hangs", () => {
    const good = database([], (db) => {
      db.run("CREATE TABLE ItemTable (key TEXT, value BLOB)");
      for (let i = 0; i < 200; i++) db.run("INSERT INTO ItemTable VALUES (?, ?)", [`k${i}`, "v".repeat(300)]);
    });
    expect(() => readSqliteTable(new TextEncoder().encode("definitely not sqlite"), "ItemTable")).toThrow(
      SqliteFormatError,
    );
    expect(() => readSqliteTable(good.subarray(0, 5000), "ItemTable")).toThrow(SqliteFormatError);
    // An interior page whose right child points back at itself.
    const looped = good.slice();
    const pageSize = (looped[16]! << 8) | looped[17]!;
    for (let page = 2; page * pageSize <= looped.length; page++) {
      const start = (page - 1) * pageSize;
      if (looped[start] === 0x05) new DataView(looped.buffer).setUint32(start + 8, page);
    }
    expect(() => readSqliteTable(looped, "ItemTable")).toThrow(SqliteFormatError);
  });
});
