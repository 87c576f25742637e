/**
 * Reads every row of one table from the bytes of a SQLite database file, for the Cursor IDE's `state.vscdb`
 * (ItemTable). A small, read-only walk of the documented file format (https://www.sqlite.org/fileformat2.html):
 * the 100-byte header, the table b-tree pages (interior 0x05, leaf 0x0d), overflow page chains and the record
 * format. It replaces a 30 MB WASM build of SQLite for a job that needs none of SQL.
 *
 * Limits, on purpose: rowid tables only (WITHOUT ROWID tables are index b-trees and are refused), an INTEGER PRIMARY
 * KEY column reads as null (its value is the rowid), pages still in a `-wal` file are not seen. Malformed input throws
 * a {@link SqliteFormatError} (bounds are checked on every read, page loops are detected), never hangs.
 */

/** A column value: NULL, INTEGER (a bigint beyond 2^53), REAL, TEXT or BLOB. */
export type SqliteValue = null | number | bigint | string | Uint8Array;

/** The bytes are not a SQLite database this reader understands. */
export class SqliteFormatError extends Error {
  override name = "SqliteFormatError";
}

const MAGIC = "SQLite format 3\u0000";

/** A varint at `offset` in `bytes`: its value (exact up to 2^53, enough for sizes) and its length in bytes. */
function varintAt(bytes: Uint8Array, offset: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = bytes[offset + i];
    if (byte === undefined) throw new SqliteFormatError("varint out of bounds");
    if (i === 8) return [value * 256 + byte, 9];
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  throw new SqliteFormatError("varint");
}

class Reader {
  readonly pageSize: number;
  readonly usable: number;
  readonly text: TextDecoder;

  constructor(readonly bytes: Uint8Array) {
    if (bytes.length < 100 || new TextDecoder("latin1").decode(bytes.subarray(0, 16)) !== MAGIC) {
      throw new SqliteFormatError("not a SQLite database");
    }
    const raw = this.u16(16);
    this.pageSize = raw === 1 ? 65_536 : raw;
    if (this.pageSize < 512 || (this.pageSize & (this.pageSize - 1)) !== 0) throw new SqliteFormatError("page size");
    this.usable = this.pageSize - (bytes[20] ?? 0);
    if (this.usable < 480) throw new SqliteFormatError("usable page size");
    const encoding = this.u32(56);
    this.text = new TextDecoder(encoding === 2 ? "utf-16le" : encoding === 3 ? "utf-16be" : "utf-8");
  }

  check(offset: number, length: number): void {
    if (offset < 0 || length < 0 || offset + length > this.bytes.length) throw new SqliteFormatError("out of bounds");
  }

  u8(offset: number): number {
    this.check(offset, 1);
    return this.bytes[offset] ?? 0;
  }

  u16(offset: number): number {
    return (this.u8(offset) << 8) | this.u8(offset + 1);
  }

  u32(offset: number): number {
    return this.u16(offset) * 65_536 + this.u16(offset + 2);
  }

  pageStart(page: number): number {
    if (!Number.isInteger(page) || page < 1) throw new SqliteFormatError("page number");
    const start = (page - 1) * this.pageSize;
    this.check(start, this.pageSize);
    return start;
  }

  /** The payload of a leaf cell whose size varint starts at `offset`: local bytes plus the overflow chain. */
  payload(offset: number): Uint8Array {
    const [size, sizeLength] = varintAt(this.bytes, offset);
    const [, rowidLength] = varintAt(this.bytes, offset + sizeLength);
    const start = offset + sizeLength + rowidLength;
    const maxLocal = this.usable - 35;
    let local = size;
    if (size > maxLocal) {
      const minLocal = Math.floor(((this.usable - 12) * 32) / 255) - 23;
      const k = minLocal + ((size - minLocal) % (this.usable - 4));
      local = k <= maxLocal ? k : minLocal;
    }
    this.check(start, local);
    const out = new Uint8Array(size);
    out.set(this.bytes.subarray(start, start + local));
    let filled = local;
    let next = local < size ? this.u32(start + local) : 0;
    const seen = new Set<number>();
    while (filled < size) {
      if (next === 0 || seen.has(next)) throw new SqliteFormatError("overflow chain");
      seen.add(next);
      const page = this.pageStart(next);
      const take = Math.min(this.usable - 4, size - filled);
      this.check(page + 4, take);
      out.set(this.bytes.subarray(page + 4, page + 4 + take), filled);
      filled += take;
      next = this.u32(page);
    }
    return out;
  }

  /** The payloads of every row of the table b-tree rooted at `root`, in rowid order. */
  tableRows(root: number): Uint8Array[] {
    const rows: Uint8Array[] = [];
    const seen = new Set<number>();
    const visit = (page: number, depth: number) => {
      if (seen.has(page) || depth > 64) throw new SqliteFormatError("b-tree loop");
      seen.add(page);
      const start = this.pageStart(page);
      const header = page === 1 ? start + 100 : start;
      const type = this.u8(header);
      if (type !== 0x0d && type !== 0x05) throw new SqliteFormatError("not a rowid table page");
      const cells = this.u16(header + 3);
      const pointers = header + (type === 0x0d ? 8 : 12);
      for (let i = 0; i < cells; i++) {
        const cell = start + this.u16(pointers + 2 * i);
        if (type === 0x0d) rows.push(this.payload(cell));
        else visit(this.u32(cell), depth + 1);
      }
      if (type === 0x05) visit(this.u32(header + 8), depth + 1);
    };
    visit(root, 0);
    return rows;
  }

  /** Decodes a record (header of serial types, then the values). */
  record(payload: Uint8Array): SqliteValue[] {
    const [headerSize, first] = varintAt(payload, 0);
    const types: number[] = [];
    for (let at = first; at < headerSize; ) {
      const [type, length] = varintAt(payload, at);
      types.push(type);
      at += length;
    }
    const values: SqliteValue[] = [];
    let at = headerSize;
    for (const type of types) {
      const [value, length] = this.value(payload, at, type);
      values.push(value);
      at += length;
    }
    return values;
  }

  value(payload: Uint8Array, at: number, type: number): [SqliteValue, number] {
    const need = (length: number) => {
      if (at + length > payload.length) throw new SqliteFormatError("record out of bounds");
      return new DataView(payload.buffer, payload.byteOffset + at, length);
    };
    if (type === 0) return [null, 0];
    if (type === 8 || type === 9) return [type - 8, 0];
    if (type === 7) return [need(8).getFloat64(0), 8];
    if (type >= 1 && type <= 6) {
      const length = [1, 2, 3, 4, 6, 8][type - 1] ?? 8;
      const data = need(length);
      let value = BigInt.asIntN(8, BigInt(data.getInt8(0)));
      for (let i = 1; i < length; i++) value = (value << 8n) | BigInt(data.getUint8(i));
      const small = Number(value);
      return [Number.isSafeInteger(small) ? small : value, length];
    }
    if (type >= 12) {
      const length = Math.floor((type - 12) / 2);
      need(length);
      const bytes = payload.slice(at, at + length);
      return [type % 2 === 0 ? bytes : this.text.decode(bytes), length];
    }
    throw new SqliteFormatError("serial type");
  }
}

/**
 * Every row of `table` (columns in declaration order), or undefined when the database has no such table.
 * @throws SqliteFormatError when the bytes are not a well-formed SQLite database (or the table is WITHOUT ROWID).
 */
export function readSqliteTable(bytes: Uint8Array, table: string): SqliteValue[][] | undefined {
  const reader = new Reader(bytes);
  // sqlite_schema (page 1): type, name, tbl_name, rootpage, sql.
  const schema = reader.tableRows(1).map((payload) => reader.record(payload));
  const entry = schema.find(
    ([type, name]) => type === "table" && typeof name === "string" && name.toLowerCase() === table.toLowerCase(),
  );
  if (entry === undefined) return undefined;
  const root = entry[3];
  if (typeof root !== "number") throw new SqliteFormatError("root page");
  return reader.tableRows(root).map((payload) => reader.record(payload));
}
