// OrderOracle asks a real java.util.HashMap for the orders javaorder models.
// It reads one case per line from stdin and prints "<case> -> <answer>":
//
//	put <id>...        ids put into a HashMap<Long,String>; answer: key order
//	compute <id>...    ids given to computeIfAbsent on a HashMap<Long,String>
//	request <b>...     buckets of a register request, each table:bucket or
//	                   table:partition:bucket; the two steps of a coordinator
//	                   (a HashMap keyed by a TableBucket-like class filled by
//	                   put, then grouping by table id with computeIfAbsent);
//	                   answer: "<table order> | <bucket order>"
//	get <b>... / <b>...
//	                   the offsets files of a producer znode, in znode
//	                   order, separated by "/", each with its buckets in file
//	                   order; a coordinator's GET: every file read into a
//	                   HashMap by put and putAll into one map, grouped by table
//	                   (ServerRpcMessageUtils.groupOffsetsByTableId);
//	                   answer: "<table order> | <index>...": the answer's
//	                   buckets in order, each as the index (among all
//	                   buckets given, from 0) of the offset it carries
//
// Every answer ends with " trees=<n>", the number of tree bins in the map(s)
// (read by reflection, hence --add-opens). Run from javaorder/:
//
//	java --add-opens java.base/java.util=ALL-UNNAMED testdata/java/OrderOracle.java \
//	    < cases > testdata/java_order.txt
//
// testdata/java_order.txt holds its own cases: sed 's/ -> .*//' gives them back.
// testdata/java_get_order.txt holds the get cases answered by JDK 17, and
// testdata/java_get_order_jdk25.txt the same cases answered by JDK 25.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;

public class OrderOracle {
    /** Keyed as the coordinator keys a bucket: equal ids, hash over (table, bucket, partition). */
    static final class Key {
        final long table;
        final Long partition;
        final int bucket;

        Key(long table, Long partition, int bucket) {
            this.table = table;
            this.partition = partition;
            this.bucket = bucket;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Key)) {
                return false;
            }
            Key k = (Key) o;
            return table == k.table && bucket == k.bucket && Objects.equals(partition, k.partition);
        }

        @Override
        public int hashCode() {
            return Objects.hash(table, bucket, partition);
        }

        @Override
        public String toString() {
            return partition == null ? table + ":" + bucket : table + ":" + partition + ":" + bucket;
        }
    }

    static int treeBins(HashMap<?, ?> m) throws Exception {
        Field f = HashMap.class.getDeclaredField("table");
        f.setAccessible(true);
        Object[] tab = (Object[]) f.get(m);
        int n = 0;
        if (tab != null) {
            for (Object bin : tab) {
                if (bin != null && bin.getClass().getSimpleName().equals("TreeNode")) {
                    n++;
                }
            }
        }
        return n;
    }

    static Key parseKey(String s) {
        String[] p = s.split(":");
        return p.length == 2
                ? new Key(Long.parseLong(p[0]), null, Integer.parseInt(p[1]))
                : new Key(Long.parseLong(p[0]), Long.parseLong(p[1]), Integer.parseInt(p[2]));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split(" +");
            StringJoiner out = new StringJoiner(" ");
            int trees;
            switch (f[0]) {
                case "put":
                case "compute": {
                    HashMap<Long, String> m = new HashMap<>();
                    for (int i = 1; i < f.length; i++) {
                        long id = Long.parseLong(f[i]);
                        if (f[0].equals("put")) {
                            m.put(id, f[i]);
                        } else {
                            m.computeIfAbsent(id, k -> "v");
                        }
                    }
                    m.keySet().forEach(k -> out.add(Long.toString(k)));
                    trees = treeBins(m);
                    break;
                }
                case "request": {
                    HashMap<Key, Long> offsets = new HashMap<>();
                    for (int i = 1; i < f.length; i++) {
                        String[] p = f[i].split(":");
                        Key k = p.length == 2
                                ? new Key(Long.parseLong(p[0]), null, Integer.parseInt(p[1]))
                                : new Key(Long.parseLong(p[0]), Long.parseLong(p[1]), Integer.parseInt(p[2]));
                        offsets.put(k, (long) i);
                    }
                    HashMap<Long, Map<Key, Long>> byTable = new HashMap<>();
                    List<String> bucketOrder = new ArrayList<>();
                    for (Map.Entry<Key, Long> e : offsets.entrySet()) {
                        bucketOrder.add(e.getKey().toString());
                        byTable.computeIfAbsent(e.getKey().table, k -> new HashMap<>()).put(e.getKey(), e.getValue());
                    }
                    byTable.keySet().forEach(k -> out.add(Long.toString(k)));
                    out.add("|");
                    bucketOrder.forEach(out::add);
                    trees = treeBins(offsets) + treeBins(byTable);
                    break;
                }
                case "get": {
                    HashMap<Key, Long> all = new HashMap<>();
                    List<HashMap<Key, Long>> files = new ArrayList<>();
                    HashMap<Key, Long> file = new HashMap<>();
                    long index = 0;
                    for (int i = 1; i <= f.length; i++) {
                        if (i == f.length || f[i].equals("/")) {
                            // ProducerOffsetsStore.readOffsets
                            all.putAll(file);
                            files.add(file);
                            file = new HashMap<>();
                            continue;
                        }
                        // TableBucketOffsetsJsonSerde.deserialize
                        file.put(parseKey(f[i]), index++);
                    }
                    // ServerRpcMessageUtils.groupOffsetsByTableId
                    HashMap<Long, Map<Key, Long>> byTable = new HashMap<>();
                    for (Map.Entry<Key, Long> e : all.entrySet()) {
                        byTable.computeIfAbsent(e.getKey().table, k -> new HashMap<>()).put(e.getKey(), e.getValue());
                    }
                    byTable.keySet().forEach(k -> out.add(Long.toString(k)));
                    out.add("|");
                    trees = treeBins(all) + treeBins(byTable);
                    for (HashMap<Key, Long> m : files) {
                        trees += treeBins(m);
                    }
                    for (Map<Key, Long> m : byTable.values()) {
                        m.values().forEach(v -> out.add(Long.toString(v)));
                        trees += treeBins((HashMap<?, ?>) m);
                    }
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown mode " + f[0]);
            }
            System.out.println(line + " -> " + out + " trees=" + trees);
        }
    }
}
