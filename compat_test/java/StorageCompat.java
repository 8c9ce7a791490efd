// StorageCompat writes and reads the two stored JSON formats of the producer
// offsets registry with Jackson, the JSON library of a Fluss coordinator:
// the producer znode (docs/storage-format.md §1.2) and the offsets file (docs/storage-format.md §6).
// It is written from the spec's rules; it does not use Fluss's classes.
//
//   java -cp <classes>:<jackson jars> StorageCompat write <dir>
//       writes <dir>/znode/*.json and <dir>/offsets/*.offsets the way a
//       coordinator writes them, and <dir>/manifest.jsonl, one JSON line per
//       file with what the file means.
//   java -cp … StorageCompat read <dir>
//       reads every file under <dir>/znode and <dir>/offsets with Jackson's
//       tree model and the coordinator's read rules, and prints one JSON line
//       per file: its meaning (or the error a coordinator would raise) and
//       whether Jackson, writing that meaning again, gives the same bytes.
//
// Serialization uses a default ObjectMapper's generator on a byte stream
// with UTF-8 encoding (a UTF8JsonGenerator, compact), which is how Fluss's
// JSON helper turns a serializer into bytes. Parsing uses a default
// ObjectMapper's readTree.

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

public final class StorageCompat {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Writes the manifest and report lines: ASCII only, whatever the platform charset. */
    private static final ObjectMapper REPORT =
            JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    private static final long NO_OFFSET = -1L;

    private StorageCompat() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("write") || args[0].equals("read"))) {
            System.err.println("usage: StorageCompat write|read <dir>");
            System.exit(2);
        }
        Path dir = Path.of(args[1]);
        if (args[0].equals("write")) {
            write(dir);
        } else {
            read(dir);
        }
    }

    // ------------------------------------------------------------------
    // Data
    // ------------------------------------------------------------------

    /** One stored bucket offset; partition is null for a non-partitioned table. */
    record Bucket(long table, Long partition, int bucket) {}

    /**
     * A bucket keyed as the coordinator keys it (TableBucket): equal when all
     * three ids are, hashed with Objects.hash(table, bucket, partition).
     */
    static final class RequestKey {
        final long table;
        final Long partition;
        final int bucket;

        RequestKey(long table, Long partition, int bucket) {
            this.table = table;
            this.partition = partition;
            this.bucket = bucket;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof RequestKey k
                    && table == k.table && bucket == k.bucket && java.util.Objects.equals(partition, k.partition);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(table, bucket, partition);
        }
    }

    /** One entry of a znode's "tables" list. */
    record TableRef(long tableId, String path) {}

    // ------------------------------------------------------------------
    // Serializers, following docs/storage-format.md §1.2 and §6
    // ------------------------------------------------------------------

    interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    static byte[] toBytes(Body body) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = MAPPER.createGenerator((OutputStream) out, JsonEncoding.UTF8)) {
            body.write(g);
        }
        return out.toByteArray();
    }

    static byte[] znodeBytes(long expirationTime, List<TableRef> tables) throws IOException {
        return toBytes(g -> {
            g.writeStartObject();
            g.writeNumberField("version", 1);
            g.writeNumberField("expiration_time", expirationTime);
            g.writeArrayFieldStart("tables");
            for (TableRef t : tables) {
                g.writeStartObject();
                g.writeNumberField("table_id", t.tableId());
                g.writeStringField("offsets_path", t.path());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        });
    }

    /**
     * The offsets file of one table: buckets grouped by partition (ascending,
     * signed), each group's array indexed by bucket id with holes as -1.
     */
    static byte[] offsetsBytes(long tableId, Map<Bucket, Long> offsets) throws IOException {
        List<Bucket> plain = new ArrayList<>();
        TreeMap<Long, List<Bucket>> parts = new TreeMap<>();
        for (Bucket b : offsets.keySet()) {
            if (b.table() != tableId) {
                throw new IllegalStateException("bucket of table " + b.table() + " in file of table " + tableId);
            }
            if (b.partition() == null) {
                plain.add(b);
            } else {
                parts.computeIfAbsent(b.partition(), k -> new ArrayList<>()).add(b);
            }
        }
        if (!plain.isEmpty() && !parts.isEmpty()) {
            throw new IllegalStateException("partitioned and non-partitioned buckets mixed");
        }
        return toBytes(g -> {
            g.writeStartObject();
            g.writeNumberField("version", 1);
            g.writeNumberField("table_id", tableId);
            if (!plain.isEmpty()) {
                g.writeArrayFieldStart("bucket_offsets");
                writeBucketArray(g, offsets, plain);
                g.writeEndArray();
            } else if (!parts.isEmpty()) {
                g.writeArrayFieldStart("partition_offsets");
                for (Map.Entry<Long, List<Bucket>> e : parts.entrySet()) {
                    g.writeStartObject();
                    g.writeNumberField("partition_id", e.getKey());
                    g.writeArrayFieldStart("bucket_offsets");
                    writeBucketArray(g, offsets, e.getValue());
                    g.writeEndArray();
                    g.writeEndObject();
                }
                g.writeEndArray();
            }
            g.writeEndObject();
        });
    }

    static void writeBucketArray(JsonGenerator g, Map<Bucket, Long> offsets, List<Bucket> buckets)
            throws IOException {
        buckets.sort(Comparator.comparingInt(Bucket::bucket));
        int next = 0;
        for (Bucket b : buckets) {
            for (; next < b.bucket(); next++) {
                g.writeNumber(NO_OFFSET);
            }
            g.writeNumber(offsets.get(b).longValue());
            next++;
        }
    }

    // ------------------------------------------------------------------
    // Readers, following the coordinator's read rules
    // ------------------------------------------------------------------

    static JsonNode required(JsonNode obj, String key) {
        JsonNode n = obj.get(key);
        if (n == null) {
            // The coordinator dereferences the missing node: a NullPointerException.
            throw new NullPointerException("missing " + key);
        }
        return n;
    }

    record Znode(long expirationTime, List<TableRef> tables) {}

    static Znode readZnode(byte[] data) throws IOException {
        JsonNode root = MAPPER.readTree(data);
        int version = required(root, "version").asInt();
        if (version != 1) {
            throw new IllegalArgumentException("Unsupported ProducerOffsets version: " + version + ", expected: 1");
        }
        long exp = required(root, "expiration_time").asLong();
        List<TableRef> tables = new ArrayList<>();
        JsonNode arr = root.get("tables");
        if (arr != null && arr.isArray()) {
            for (JsonNode t : arr) {
                tables.add(new TableRef(required(t, "table_id").asLong(), required(t, "offsets_path").asText()));
            }
        }
        return new Znode(exp, tables);
    }

    record OffsetsFile(long tableId, Map<Bucket, Long> offsets) {}

    static OffsetsFile readOffsets(byte[] data) throws IOException {
        JsonNode root = MAPPER.readTree(data);
        int version = required(root, "version").asInt();
        if (version != 1) {
            throw new IllegalArgumentException("Unsupported version: " + version);
        }
        long tableId = required(root, "table_id").asLong();
        Map<Bucket, Long> offsets = new HashMap<>();
        JsonNode plain = root.get("bucket_offsets");
        JsonNode parts = root.get("partition_offsets");
        if (plain != null && parts != null) {
            throw new IllegalArgumentException(
                    "Both bucket_offsets and partition_bucket_offsets cannot be present at the same time");
        }
        if (plain != null) {
            readBucketArray(plain, tableId, null, offsets);
        } else if (parts != null) {
            for (JsonNode p : parts) {
                long pid = required(p, "partition_id").asLong();
                readBucketArray(required(p, "bucket_offsets"), tableId, pid, offsets);
            }
        }
        return new OffsetsFile(tableId, offsets);
    }

    static void readBucketArray(JsonNode arr, long tableId, Long partition, Map<Bucket, Long> into) {
        int id = 0;
        for (JsonNode v : arr) {
            long off = v.asLong();
            if (off != NO_OFFSET) {
                into.put(new Bucket(tableId, partition, id), off);
            }
            id++;
        }
    }

    // ------------------------------------------------------------------
    // Canonical meanings (JSON objects shared with the Go test)
    // ------------------------------------------------------------------

    static ObjectNode znodeMeaning(long exp, List<TableRef> tables) {
        ObjectNode m = MAPPER.createObjectNode();
        m.put("expiration_time", exp);
        ArrayNode arr = m.putArray("tables");
        for (TableRef t : tables) {
            ObjectNode o = arr.addObject();
            o.put("table_id", t.tableId());
            o.put("offsets_path", t.path());
        }
        return m;
    }

    /** Buckets sorted by (partition, bucket), non-partitioned first. */
    static ObjectNode offsetsMeaning(long tableId, Map<Bucket, Long> offsets) {
        ObjectNode m = MAPPER.createObjectNode();
        m.put("table_id", tableId);
        ArrayNode arr = m.putArray("buckets");
        offsets.entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<Bucket, Long> e) -> e.getKey().partition() != null)
                        .thenComparing(e -> e.getKey().partition() == null ? 0L : e.getKey().partition())
                        .thenComparingInt(e -> e.getKey().bucket()))
                .forEach(e -> {
                    ObjectNode o = arr.addObject();
                    o.put("partitioned", e.getKey().partition() != null);
                    o.put("partition_id", e.getKey().partition() == null ? 0L : e.getKey().partition());
                    o.put("bucket_id", e.getKey().bucket());
                    o.put("log_end_offset", e.getValue());
                });
        return m;
    }

    // ------------------------------------------------------------------
    // write mode
    // ------------------------------------------------------------------

    static final class Writer {
        final Path dir;
        final List<String> manifest = new ArrayList<>();

        Writer(Path dir) throws IOException {
            this.dir = dir;
            Files.createDirectories(dir.resolve("znode"));
            Files.createDirectories(dir.resolve("offsets"));
        }

        /**
         * A znode whose tables list is the iteration order of a HashMap<Long, String>.
         * fill "put": map.put(id, path) for each id of calls, in order. fill
         * "computeIfAbsent": map.computeIfAbsent(id, …) for each id of calls,
         * as the coordinator groups a register's buckets by table (one call
         * per bucket, so an id may repeat).
         */
        void znode(String name, String fill, long exp, long[] calls, Map<Long, String> paths) throws IOException {
            HashMap<Long, String> map = new HashMap<>();
            for (long id : calls) {
                String p = paths.get(id);
                if (fill.equals("put")) {
                    map.put(id, p);
                } else {
                    map.computeIfAbsent(id, k -> p);
                }
            }
            List<TableRef> tables = new ArrayList<>();
            for (Map.Entry<Long, String> e : map.entrySet()) {
                tables.add(new TableRef(e.getKey(), e.getValue()));
            }
            String file = "znode/" + name + ".json";
            Files.write(dir.resolve(file), znodeBytes(exp, tables));
            ObjectNode line = MAPPER.createObjectNode();
            line.put("file", file);
            line.put("kind", "znode");
            line.put("fill", fill);
            ArrayNode c = line.putArray("calls");
            for (long id : calls) {
                c.add(id);
            }
            line.set("meaning", znodeMeaning(exp, tables));
            manifest.add(REPORT.writeValueAsString(line));
        }

        /**
         * A znode written the way a coordinator answers a register request:
         * every bucket (table, partition or null, bucket) is put into a
         * HashMap keyed by a TableBucket-like key, in request order; the
         * map's entries are then grouped by table with one computeIfAbsent
         * per bucket on a HashMap<Long, …>, whose iteration order is the
         * znode's. The manifest line carries the request ("request") so that
         * the Go side can work the order out from the same input.
         */
        void request(String name, long exp, Object[][] buckets, String prefix) throws IOException {
            HashMap<RequestKey, Long> offsets = new HashMap<>();
            long n = 0;
            for (Object[] b : buckets) {
                offsets.put(new RequestKey((Long) b[0], (Long) b[1], (Integer) b[2]), n++);
            }
            HashMap<Long, Map<RequestKey, Long>> byTable = new HashMap<>();
            for (Map.Entry<RequestKey, Long> e : offsets.entrySet()) {
                byTable.computeIfAbsent(e.getKey().table, k -> new HashMap<>()).put(e.getKey(), e.getValue());
            }
            List<TableRef> tables = new ArrayList<>();
            for (Long id : byTable.keySet()) {
                tables.add(new TableRef(id, prefix + "/producers/job-1/" + id + "/550e8400-e29b-41d4-a716-44665544"
                        + String.format("%04x", id & 0xFFFF) + ".offsets"));
            }
            String file = "znode/" + name + ".json";
            Files.write(dir.resolve(file), znodeBytes(exp, tables));
            ObjectNode line = MAPPER.createObjectNode();
            line.put("file", file);
            line.put("kind", "znode");
            line.put("fill", "request");
            ArrayNode req = line.putArray("request");
            for (Object[] b : buckets) {
                ObjectNode o = req.addObject();
                o.put("table", (Long) b[0]);
                if (b[1] == null) {
                    o.putNull("partition");
                } else {
                    o.put("partition", (Long) b[1]);
                }
                o.put("bucket", (Integer) b[2]);
            }
            line.set("meaning", znodeMeaning(exp, tables));
            manifest.add(REPORT.writeValueAsString(line));
        }

        /** An offsets file for the given (partition, bucket) → offset entries. */
        void offsets(String name, long tableId, Object[][] entries) throws IOException {
            Map<Bucket, Long> offsets = new HashMap<>();
            for (Object[] e : entries) {
                offsets.put(new Bucket(tableId, (Long) e[0], (Integer) e[1]), (Long) e[2]);
            }
            String file = "offsets/" + name + ".offsets";
            Files.write(dir.resolve(file), offsetsBytes(tableId, offsets));
            // What a coordinator reads back: every -1 is dropped.
            Map<Bucket, Long> read = new HashMap<>();
            offsets.forEach((b, v) -> {
                if (v != NO_OFFSET) {
                    read.put(b, v);
                }
            });
            ObjectNode line = MAPPER.createObjectNode();
            line.put("file", file);
            line.put("kind", "offsets");
            line.set("meaning", offsetsMeaning(tableId, read));
            manifest.add(REPORT.writeValueAsString(line));
        }

        void finish() throws IOException {
            Files.write(dir.resolve("manifest.jsonl"),
                    (String.join("\n", manifest) + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    static Map<Long, String> pathsFor(long[] ids, String prefix) {
        Map<Long, String> m = new HashMap<>();
        for (long id : ids) {
            m.put(id, prefix + "/producers/job-1/" + id + "/550e8400-e29b-41d4-a716-44665544" + String.format("%04x", id & 0xFFFF) + ".offsets");
        }
        return m;
    }

    static long[] range(long from, long step, int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = from + i * step;
        }
        return out;
    }

    /** perTable buckets (from first) of each table, tables in the given order, unpartitioned. */
    static Object[][] buckets(long[] tables, int perTable, int first) {
        List<Object[]> out = new ArrayList<>();
        for (long t : tables) {
            for (int b = first; b < first + perTable; b++) {
                out.add(new Object[] {t, null, b});
            }
        }
        return out.toArray(new Object[0][]);
    }

    static long[] reversed(long[] in) {
        long[] out = new long[in.length];
        for (int i = 0; i < in.length; i++) {
            out[i] = in[in.length - 1 - i];
        }
        return out;
    }

    static final long EXP = 1735538268000L;

    static void write(Path dir) throws IOException {
        Writer w = new Writer(dir);
        String s3 = "s3://bucket/fluss";

        // docs/storage-format.md §1.2: the test bytes and the documented order.
        w.znode("spec_empty", "put", EXP, new long[] {}, Map.of());
        w.znode("spec_two", "put", EXP, new long[] {100, 200},
                Map.of(100L, "oss://bucket/path/uuid1.offsets", 200L, "s3://bucket/path/uuid2.offsets"));
        long[] specOrder = {2, 17, 100, 200, 1};
        w.znode("spec_order_put", "put", EXP, specOrder, pathsFor(specOrder, s3));
        w.znode("spec_order_compute", "computeIfAbsent", EXP, specOrder, pathsFor(specOrder, s3));

        // More than 12 tables: the map resizes 16 → 32 → 64.
        long[] thirty = reversed(range(1, 1, 30));
        w.znode("resize_30_put", "put", EXP, thirty, pathsFor(thirty, s3));
        // 13 ids, all in bucket 1 of 16: the 9th forces an early resize.
        long[] collide = range(1, 16, 13);
        w.znode("collide_13_put", "put", EXP, collide, pathsFor(collide, s3));
        // 0..11 and 16: 0 and 16 share a bucket of the 16-bucket table.
        long[] lazy = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16};
        w.znode("lazy_resize_put", "put", EXP, lazy, pathsFor(lazy, s3));
        w.znode("lazy_resize_compute", "computeIfAbsent", EXP, lazy, pathsFor(lazy, s3));
        // One computeIfAbsent per bucket: 3 buckets of table 5 after the 13th table.
        long[] lazyCalls = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 5, 5, 5};
        w.znode("lazy_resize_compute_more_buckets", "computeIfAbsent", EXP, lazyCalls, pathsFor(lazy, s3));
        // Eleven ids equal modulo 64: a bin of a 64-bucket table becomes a tree.
        long[] tree = range(0, 64, 11);
        w.znode("treeified_put", "put", EXP, tree, pathsFor(tree, s3));

        // Register requests, ordered as a coordinator orders them (buckets
        // hashed first, then grouped by table).
        w.request("request_spec_ids", EXP, buckets(new long[] {2, 17, 100, 200, 1}, 1, 0), s3);
        w.request("request_table_sent_twice", EXP, new Object[][] {
                {17L, null, 0}, {1L, null, 0}, {17L, null, 1}, {33L, null, 0}}, s3);
        // 40 tables of 3 buckets: both maps resize several times.
        w.request("request_40_tables", EXP, buckets(range(40, -1, 40), 3, 0), s3);
        // 13 tables, then more buckets of one of them: the grouping map's
        // lazy resize.
        List<Object[]> lazyReq = new ArrayList<>();
        for (long t : new long[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16}) {
            lazyReq.add(new Object[] {t, null, 0});
        }
        for (int b = 1; b < 4; b++) {
            lazyReq.add(new Object[] {5L, null, b});
        }
        w.request("request_lazy_resize", EXP, lazyReq.toArray(new Object[0][]), s3);
        // 100 and 70 buckets of two tables: a 256-bin bucket map.
        List<Object[]> wide = new ArrayList<>();
        for (int b = 99; b >= 0; b--) {
            wide.add(new Object[] {7L, null, b});
        }
        for (int b = 0; b < 70; b++) {
            wide.add(new Object[] {8L, null, b});
        }
        w.request("request_many_buckets", EXP, wide.toArray(new Object[0][]), s3);
        // Equal TableBucket hashes across tables: 961·table + 31·bucket.
        w.request("request_colliding_hashes", EXP, new Object[][] {
                {1L, null, 31}, {2L, null, 0}, {1L, null, 0}, {0L, null, 62}, {3L, null, 0},
                {4L, null, 31}, {5L, null, 0}, {3L, null, 62}}, s3);
        // Partitioned tables, partition ids of every sign.
        w.request("request_partitioned", EXP, new Object[][] {
                {5L, 0L, 0}, {5L, 0L, 1}, {5L, 1L, 0}, {6L, -1L, 0}, {6L, Long.MIN_VALUE, 1},
                {6L, Long.MAX_VALUE, 2}, {9L, 1L << 40, 3}, {9L, 31L, 0}, {10L, 0L, 1}}, s3);
        // Negative and extreme table ids.
        w.request("request_extreme_ids", EXP, buckets(
                new long[] {-1, -2, Long.MIN_VALUE, Long.MAX_VALUE, -4294967296L, 4294967296L, 0, 65536, -65537}, 2, 0), s3);

        // Negative and extreme ids and expiration times.
        long[] extreme = {-1, -2, Long.MIN_VALUE, Long.MAX_VALUE, -4294967296L, 4294967296L, 0, 65536, -65537};
        w.znode("extreme_ids", "put", -1L, extreme, pathsFor(extreme, s3));
        w.znode("max_exp", "put", Long.MAX_VALUE, new long[] {7}, pathsFor(new long[] {7}, s3));
        w.znode("min_exp", "put", Long.MIN_VALUE, new long[] {7}, pathsFor(new long[] {7}, s3));

        // Strings Jackson escapes, and strings it writes raw.
        Map<Long, String> esc = new HashMap<>();
        esc.put(1L, "s3://b/quote\"back\\slash/x.offsets");
        esc.put(2L, "s3://b/ctl\u0000\u0001\b\t\n\u000B\f\r\u001F\u007F/x.offsets");
        esc.put(3L, "s3://b/caf\u00E9/\u4E2D\u6587/\uD83D\uDE00/x.offsets");
        esc.put(4L, "s3://b/sep\u2028\u2029/\uFFFD\uFEFF/x.offsets");
        esc.put(5L, "s3://b/slash/ ?#%20&<>'/x.offsets");
        w.znode("escaping", "put", EXP, new long[] {1, 2, 3, 4, 5}, esc);

        // Bare (scheme-less) and file: paths, as FsPath prints them.
        Map<Long, String> local = new HashMap<>();
        local.put(10L, "/tmp/fluss/remote/producers/my-producer-1/10/550e8400-e29b-41d4-a716-446655440000.offsets");
        local.put(11L, "file:/tmp/fluss/remote/producers/my-producer-1/11/550e8400-e29b-41d4-a716-446655440000.offsets");
        local.put(12L, "hdfs://nn:9000/fluss/producers/my-producer-1/12/550e8400-e29b-41d4-a716-446655440000.offsets");
        local.put(13L, "C:/fluss/remote/producers/my-producer-1/13/550e8400-e29b-41d4-a716-446655440000.offsets");
        w.znode("local_paths", "put", EXP, new long[] {10, 11, 12, 13}, local);

        // docs/storage-format.md §6: the test bytes.
        w.offsets("spec_empty", 1, new Object[][] {});
        w.offsets("spec_dense", 4, new Object[][] {{null, 0, 100L}, {null, 1, 200L}, {null, 2, 300L}});
        w.offsets("spec_holes", 5, new Object[][] {{null, 0, 100L}, {null, 2, 300L}, {null, 4, 500L}});
        w.offsets("spec_partitioned", 6, new Object[][] {{1L, 0, 100L}, {1L, 1, 200L}, {2L, 0, 300L}, {2L, 1, 400L}});
        w.offsets("spec_partitioned_holes", 7,
                new Object[][] {{1L, 0, 100L}, {1L, 2, 300L}, {2L, 1, 400L}, {2L, 3, 600L}});
        // Leading holes, a lone high bucket, extreme values and ids.
        w.offsets("leading_holes", -3, new Object[][] {{null, 9, 0L}, {null, 3, Long.MAX_VALUE}});
        w.offsets("extreme_table", Long.MIN_VALUE, new Object[][] {{null, 0, 0L}});
        w.offsets("extreme_table_max", Long.MAX_VALUE, new Object[][] {{null, 1, 1L}});
        // Partitions sorted as signed longs; holes at the front of a partition.
        w.offsets("partitions_signed", 42, new Object[][] {
                {Long.MAX_VALUE, 0, 1L}, {-5L, 2, 2L}, {Long.MIN_VALUE, 1, 3L}, {0L, 0, 4L}, {-1L, 3, 5L}});
        // 100 buckets, every tenth missing.
        List<Object[]> many = new ArrayList<>();
        for (int b = 0; b < 100; b++) {
            if (b % 10 != 7) {
                many.add(new Object[] {null, b, 50000L + b});
            }
        }
        w.offsets("hundred_buckets", 50, many.toArray(new Object[0][]));
        w.finish();
    }

    // ------------------------------------------------------------------
    // read mode
    // ------------------------------------------------------------------

    static void read(Path dir) throws IOException {
        for (String kind : List.of("znode", "offsets")) {
            Path sub = dir.resolve(kind);
            if (!Files.isDirectory(sub)) {
                continue;
            }
            List<Path> files;
            try (Stream<Path> s = Files.list(sub)) {
                files = s.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
            }
            for (Path f : files) {
                byte[] in = Files.readAllBytes(f);
                ObjectNode line = MAPPER.createObjectNode();
                line.put("file", kind + "/" + f.getFileName());
                line.put("kind", kind);
                try {
                    byte[] again;
                    if (kind.equals("znode")) {
                        Znode z = readZnode(in);
                        line.set("meaning", znodeMeaning(z.expirationTime(), z.tables()));
                        again = znodeBytes(z.expirationTime(), z.tables());
                    } else {
                        OffsetsFile o = readOffsets(in);
                        line.set("meaning", offsetsMeaning(o.tableId(), o.offsets()));
                        again = offsetsBytes(o.tableId(), o.offsets());
                    }
                    line.put("reserialized_equal", Arrays.equals(in, again));
                    if (!Arrays.equals(in, again)) {
                        line.put("reserialized", new String(again, StandardCharsets.UTF_8));
                    }
                } catch (RuntimeException | IOException e) {
                    line.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                System.out.println(REPORT.writeValueAsString(line));
            }
        }
    }
}
