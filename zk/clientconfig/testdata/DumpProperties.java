// Reads a properties file with java.util.Properties, as ZooKeeper's client
// configuration does, and prints each trimmed key and value with every
// character outside printable ASCII as a four-digit escape, sorted by key, so that the
// Go parser's reading of the same file can be compared line by line.
import java.io.FileInputStream;
import java.util.Properties;
import java.util.TreeMap;

public class DumpProperties {
    static String show(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c >= 0x20 && c < 0x7f && c != '\\') b.append(c);
            else b.append(String.format("\\u%04x", (int) c));
        }
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        for (String path : args) {
            Properties p = new Properties();
            try (FileInputStream in = new FileInputStream(path)) {
                p.load(in);
            }
            TreeMap<String, String> sorted = new TreeMap<>();
            for (String k : p.stringPropertyNames()) {
                sorted.put(k.trim(), p.getProperty(k).trim());
            }
            System.out.println("== " + path);
            for (var e : sorted.entrySet()) {
                System.out.println(show(e.getKey()) + "=" + show(e.getValue()));
            }
        }
    }
}
