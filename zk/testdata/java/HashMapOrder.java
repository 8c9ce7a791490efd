// Prints, for each line of ids read from stdin, the order in which a
// java.util.HashMap<Long, String> filled in that order iterates its keys.
// Used to produce testdata/hashmap_order.txt:
//
//	java testdata/java/HashMapOrder.java < in > testdata/hashmap_order.txt
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.Map;
import java.util.StringJoiner;

public class HashMapOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            Map<Long, String> m = new HashMap<>();
            for (String f : line.split(" ")) {
                m.put(Long.parseLong(f), f);
            }
            StringJoiner out = new StringJoiner(" ");
            for (Long k : m.keySet()) {
                out.add(Long.toString(k));
            }
            System.out.println(line + " -> " + out);
        }
    }
}
