// Reads the JAAS file named by -Djava.security.auth.login.config with the
// JVM's own login configuration and prints, for each section named on the
// command line, its login modules with their flag and options (sorted),
// so that the Go parser's reading of the same file can be compared.
import java.util.Map;
import java.util.TreeMap;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;

public class DumpJAAS {
    public static void main(String[] args) {
        Configuration conf = Configuration.getConfiguration();
        for (String section : args) {
            AppConfigurationEntry[] entries = conf.getAppConfigurationEntry(section);
            System.out.println("section " + section + " " + (entries == null ? "missing" : entries.length));
            if (entries == null) continue;
            for (AppConfigurationEntry e : entries) {
                String flag = e.getControlFlag().toString().replace("LoginModuleControlFlag: ", "");
                System.out.println("module " + e.getLoginModuleName() + " " + flag);
                for (Map.Entry<String, ?> o : new TreeMap<String, Object>(e.getOptions()).entrySet()) {
                    System.out.println("option " + o.getKey() + "=" + o.getValue());
                }
            }
        }
    }
}
