/*
 * ExactlyOnceJob: a Flink job in a local MiniCluster writes a fixed input
 * through Fluss's Flink sink (fluss-flink-1.20) into a primary-key table
 * with the aggregation merge engine (SUM on v), fails once on purpose, and
 * after it finishes reads every key back and checks its sum equals its
 * count in the input. The sink of an aggregation table recovers through
 * the producer-offsets registry when the job restarts without a checkpoint
 * (and from its checkpointed offsets otherwise), undoing what it wrote past
 * the recovery point, so a wrong registry answer shows up as a wrong sum.
 *
 * Built and run by compat_test/flink_test.go against
 * .deps/maven/flinkjob/lib (compat_test/flinkjob/pom.xml).
 *
 * Arguments: --bootstrap HOST:PORT --table NAME --records N --keys K
 *   --fail none|before-checkpoint|after-checkpoint --fail-at R
 *   --checkpoint-ms C (interval; the first checkpoint comes after at least
 *   C*4/5, so a before-checkpoint failure can come after rows were written)
 *   --parallelism P (default 1: fluss-flink 0.9.1 routes every writer's
 *   offset reports of one sink to a single JVM-wide entry, so in one JVM
 *   with two writer subtasks one recovery operator gets all reports and the
 *   other none, and checkpoint recovery can undo rows it never replays)
 *   --prefill P (every key gets P before the job, which recovery must keep)
 *   --producer-id ID (the sink's; default the Flink job id)
 *   --wait-stdin true (print "EVENT table-id <id>", then wait for a line on
 *   stdin before the job starts: the Go test plants a stale registry entry)
 * Output lines for the Go test: "EVENT <name> ...", "KEY <k> <sum>",
 * "RESULT PASS|FAIL ...".
 */

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.time.Time;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.config.ConfigOptions;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.flink.sink.FlussSink;
import org.apache.fluss.flink.sink.FlussSinkBuilder;
import org.apache.fluss.flink.sink.serializer.RowDataSerializationSchema;
import org.apache.fluss.metadata.AggFunctions;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.MergeEngineType;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

public class ExactlyOnceJob {
    static final String DB = "flinkjob";

    // The MiniCluster runs in this JVM, so these outlive a job restart:
    // the failure is injected once per run.
    static final AtomicLong SEEN = new AtomicLong();
    static final AtomicBoolean FAILED = new AtomicBoolean();
    static final AtomicBoolean CHECKPOINTED = new AtomicBoolean();
    static final AtomicBoolean TOO_LATE = new AtomicBoolean();

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        String bootstrap = a.get("bootstrap");
        String table = a.getOrDefault("table", "sums");
        long records = Long.parseLong(a.getOrDefault("records", "20000"));
        int keys = Integer.parseInt(a.getOrDefault("keys", "100"));
        String fail = a.getOrDefault("fail", "none");
        long failAt = Long.parseLong(a.getOrDefault("fail-at", "2000"));
        int rate = Integer.parseInt(a.getOrDefault("rate", "5000"));
        int parallelism = Integer.parseInt(a.getOrDefault("parallelism", "1"));
        long checkpointMs = Long.parseLong(a.getOrDefault("checkpoint-ms", "1000"));
        long prefill = Long.parseLong(a.getOrDefault("prefill", "0"));
        String producerId = a.get("producer-id");
        boolean waitStdin = Boolean.parseBoolean(a.getOrDefault("wait-stdin", "false"));

        org.apache.fluss.config.Configuration fc = new org.apache.fluss.config.Configuration();
        fc.setString("bootstrap.servers", bootstrap);
        TablePath path = TablePath.of(DB, table);
        try (Connection conn = ConnectionFactory.createConnection(fc);
                Admin admin = conn.getAdmin()) {
            admin.createDatabase(DB, DatabaseDescriptor.EMPTY, true).get();
            Schema schema =
                    Schema.newBuilder()
                            .column("k", DataTypes.INT())
                            .column("v", DataTypes.BIGINT(), AggFunctions.SUM())
                            .primaryKey("k")
                            .build();
            admin.createTable(
                            path,
                            TableDescriptor.builder()
                                    .schema(schema)
                                    .distributedBy(4, "k")
                                    .property(ConfigOptions.TABLE_MERGE_ENGINE, MergeEngineType.AGGREGATION)
                                    .build(),
                            false)
                    .get();
            long tableId = admin.getTableInfo(path).get().getTableId();
            System.out.println("EVENT table-created " + path);
            if (prefill != 0) {
                try (Table t = conn.getTable(path)) {
                    UpsertWriter w = t.newUpsert().createWriter();
                    for (int k = 0; k < keys; k++) {
                        w.upsert(GenericRow.of(k, prefill));
                    }
                    w.flush();
                }
                System.out.printf("EVENT prefilled %d per key%n", prefill);
            }
            if (waitStdin) {
                System.out.printf("EVENT table-id %d%n", tableId);
                System.out.flush();
                new BufferedReader(new InputStreamReader(System.in)).readLine();
            }

            Configuration conf = new Configuration();
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
            env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
            env.enableCheckpointing(checkpointMs);
            env.getCheckpointConfig().setMinPauseBetweenCheckpoints(checkpointMs * 4 / 5);
            env.setRestartStrategy(RestartStrategies.fixedDelayRestart(20, Time.seconds(1)));

            final int nkeys = keys;
            DataGeneratorSource<RowData> source =
                    new DataGeneratorSource<>(
                            (GeneratorFunction<Long, RowData>)
                                    i -> GenericRowData.of((int) (i % nkeys), 1L),
                            records,
                            RateLimiterStrategy.perSecond(rate),
                            InternalTypeInfo.of(RowType.of(new IntType(false), new BigIntType())));

            FlussSinkBuilder<RowData> sb =
                    FlussSink.<RowData>builder()
                            .setBootstrapServers(bootstrap)
                            .setDatabase(DB)
                            .setTable(table)
                            .setSerializationSchema(new RowDataSerializationSchema(false, false));
            if (producerId != null) {
                sb.setProducerId(producerId);
            }
            FlussSink<RowData> sink = sb.build();

            env.fromSource(source, WatermarkStrategy.noWatermarks(), "numbers")
                    .map(new FailOnce(fail, failAt))
                    .returns(InternalTypeInfo.of(RowType.of(new IntType(false), new BigIntType())))
                    .sinkTo(sink)
                    .name("fluss");
            long start = System.nanoTime();
            env.execute("exactly-once-" + table);
            System.out.printf("EVENT job-finished ms=%d%n", (System.nanoTime() - start) / 1_000_000);
            if (!"none".equals(fail) && !FAILED.get()) {
                System.out.println("RESULT FAIL the failure was never injected");
                System.exit(1);
            }

            // Read every key back through the same bootstrap.
            long want = records / keys;
            int bad = 0;
            try (Table t = conn.getTable(path)) {
                Lookuper lk = t.newLookup().createLookuper();
                for (int k = 0; k < keys; k++) {
                    InternalRow row = lk.lookup(GenericRow.of(k)).get().getSingletonRow();
                    long got = row == null ? 0 : row.getLong(1);
                    long exp = prefill + want + (k < records % keys ? 1 : 0);
                    System.out.printf("KEY %d %d%n", k, got);
                    if (got != exp) {
                        bad++;
                        System.out.printf("MISMATCH key=%d sum=%d want=%d%n", k, got, exp);
                    }
                }
            }
            if (bad > 0) {
                System.out.printf("RESULT FAIL %d of %d keys have a wrong sum%n", bad, keys);
                System.exit(1);
            }
            System.out.printf("RESULT PASS %d keys, each sum equals its count%n", keys);
        }
        System.exit(0);
    }

    /** Passes rows on and throws once, at row failAt of the whole job. */
    static class FailOnce extends RichMapFunction<RowData, RowData> implements CheckpointListener {
        final String mode;
        final long failAt;

        FailOnce(String mode, long failAt) {
            this.mode = mode;
            this.failAt = failAt;
        }

        @Override
        public RowData map(RowData r) throws Exception {
            long n = SEEN.incrementAndGet();
            if (!"none".equals(mode) && n >= failAt && !FAILED.get()) {
                boolean cp = CHECKPOINTED.get();
                boolean due = "before-checkpoint".equals(mode) ? !cp : cp;
                if (due && FAILED.compareAndSet(false, true)) {
                    System.out.printf("EVENT failing row=%d checkpointed=%b%n", n, cp);
                    System.out.flush();
                    throw new RuntimeException("injected failure at row " + n);
                }
                if ("before-checkpoint".equals(mode) && cp && TOO_LATE.compareAndSet(false, true)) {
                    System.out.println("EVENT too-late a checkpoint completed before the failure point");
                    System.out.flush();
                }
            }
            return r;
        }

        @Override
        public void notifyCheckpointComplete(long id) {
            if (CHECKPOINTED.compareAndSet(false, true)) {
                System.out.printf("EVENT checkpoint-complete id=%d%n", id);
                System.out.flush();
            }
        }
    }
}
