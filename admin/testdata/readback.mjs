// Reads an export back with implementations independent of arrow-go:
// npm's apache-arrow (Arrow IPC file) and hyparquet (Parquet), and plain
// string handling for CSV and JSON lines. Prints one JSON line with the
// schema, then one JSON array per row, 64-bit integers as strings:
//   [producer_id, table_id, partition_id|null, bucket_id, log_end_offset, expiration_time, expired]
// Run from the directory holding node_modules (scripts/install-deps.sh puts
// them in .deps/node): node --input-type=module -e "$(cat readback.mjs)" FORMAT FILE
import { readFileSync } from 'node:fs';

const [format, file] = process.argv.slice(1);
const big = (v) => (v === null || v === undefined ? null : String(v));
const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const cols = ['producer_id', 'table_id', 'partition_id', 'bucket_id', 'log_end_offset', 'expiration_time', 'expired'];
const row = (o) => [o.producer_id, big(o.table_id), big(o.partition_id), Number(o.bucket_id), big(o.log_end_offset), big(o.expiration_time), o.expired];

if (format === 'arrow') {
  const { tableFromIPC } = await import('apache-arrow');
  const table = tableFromIPC(readFileSync(file));
  out({ schema: table.schema.fields.map((f) => [f.name, String(f.type), f.nullable]) });
  for (const r of table) out(row(r.toJSON()));
} else if (format === 'parquet') {
  const { parquetMetadata, parquetReadObjects, parquetSchema } = await import('hyparquet');
  const buf = readFileSync(file);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const md = parquetMetadata(ab);
  const schema = parquetSchema(md).children.map((c) => [c.element.name, c.element.type, c.element.repetition_type]);
  out({ schema, row_groups: md.row_groups.length });
  for (const r of await parquetReadObjects({ file: ab })) out(row(r));
} else if (format === 'csv') {
  const lines = readFileSync(file, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const header = lines.shift().split(',');
  out({ schema: header });
  for (const l of lines) {
    const f = l.split(',');
    out([f[0], f[1], f[2] === '' ? null : f[2], Number(f[3]), f[4], f[5], f[6] === 'true']);
  }
} else if (format === 'jsonl') {
  out({ schema: cols });
  const text = readFileSync(file, 'utf8');
  for (const l of text.split('\n')) {
    if (l === '') continue;
    // Numbers as text, so 64-bit values keep every digit.
    const o = JSON.parse(l.replace(/:(-?\d+)([,}])/g, ':"$1"$2'));
    out([o.producer_id, o.table_id, o.partition_id, Number(o.bucket_id), o.log_end_offset, o.expiration_time, o.expired]);
  }
} else {
  throw new Error('unknown format ' + format);
}
