// Loads each client properties file named on the command line with
// ZooKeeper's own ZKClientConfig (ZooKeeper's jars on the class path) and
// prints what ZooKeeper's client would use: the JAAS file, whether TLS and
// SASL are on, the JAAS section, and the value it holds for each property
// named with -Dkeys=a,b,c ("-" when it has none), so that the sidecar's
// reading of the same files can be compared.
import org.apache.zookeeper.client.ZKClientConfig;

public class DumpZKClientConfig {
    public static void main(String[] args) {
        String[] keys = System.getProperty("keys", "").split(",");
        for (String path : args) {
            System.out.println("== " + path);
            ZKClientConfig c;
            try {
                c = new ZKClientConfig(path);
            } catch (Exception e) {
                System.out.println("error " + e);
                continue;
            }
            System.out.println("jaas=" + c.getJaasConfKey());
            System.out.println("secure=" + c.getBoolean(ZKClientConfig.SECURE_CLIENT));
            System.out.println("sasl=" + c.isSaslClientEnabled());
            System.out.println("section=" + c.getProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY,
                    ZKClientConfig.LOGIN_CONTEXT_NAME_KEY_DEFAULT));
            for (String k : keys) {
                if (k.isEmpty()) continue;
                String v = c.getProperty(k);
                System.out.println(k + "=" + (v == null ? "-" : v));
            }
        }
    }
}
