import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;

/**
 * Runs Hadoop's MiniDFSCluster (one NameNode, some DataNodes, all bound to
 * 127.0.0.1) for internal/hdfstest, and takes one command a line on stdin,
 * answering one line on stdout: "ok [value]" or "error <message>". Hadoop's
 * own client (DistributedFileSystem, as the cluster's superuser) serves the
 * file commands. Arguments: base dir, NameNode RPC port, number of
 * DataNodes.
 */
public final class MiniHdfs {
    private static MiniDFSCluster cluster;
    private static final Map<Integer, MiniDFSCluster.DataNodeProperties> stopped = new HashMap<>();

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        // Hadoop's log goes nowhere (no logging binding); keep stdout for answers.
        System.setOut(System.err);
        String base = args[0];
        int nnPort = Integer.parseInt(args[1]);
        int dataNodes = Integer.parseInt(args[2]);
        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base);
        conf.set("dfs.namenode.http-address", "127.0.0.1:0");
        conf.set("dfs.namenode.https-address", "127.0.0.1:0");
        conf.set("dfs.namenode.secondary.http-address", "127.0.0.1:0");
        conf.set("dfs.datanode.address", "127.0.0.1:0");
        conf.set("dfs.datanode.http.address", "127.0.0.1:0");
        conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
        conf.set("dfs.datanode.hostname", "127.0.0.1");
        conf.setBoolean("dfs.permissions.enabled", true);
        // A quick safe-mode exit and no waiting for replication on restart.
        conf.setInt("dfs.namenode.safemode.extension", 0);
        conf.setInt("dfs.replication", Math.min(dataNodes, 3));
        conf.setInt("dfs.namenode.heartbeat.recheck-interval", 3000);
        conf.setInt("dfs.heartbeat.interval", 1);
        cluster = new MiniDFSCluster.Builder(conf)
                .nameNodePort(nnPort)
                .nameNodeHttpPort(0)
                .numDataNodes(dataNodes)
                .checkDataNodeAddrConfig(true)
                .build();
        cluster.waitActive();
        out.println("ready " + cluster.getNameNodePort());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            try {
                out.println("ok " + run(f));
            } catch (Throwable e) {
                out.println("error " + e.getClass().getName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
        }
        cluster.shutdown();
    }

    private static DistributedFileSystem fs() throws Exception {
        return cluster.getFileSystem();
    }

    private static String run(String[] f) throws Exception {
        switch (f[0]) {
            case "stop-datanode": {
                int i = Integer.parseInt(f[1]);
                stopped.put(i, cluster.stopDataNode(i));
                return "";
            }
            case "start-datanode": {
                int i = Integer.parseInt(f[1]);
                MiniDFSCluster.DataNodeProperties p = stopped.remove(i);
                if (p == null) {
                    throw new IllegalStateException("datanode " + i + " is not stopped");
                }
                cluster.restartDataNode(p, true);
                cluster.waitActive();
                return "";
            }
            case "stop-namenode":
                cluster.shutdownNameNode(0);
                return "";
            case "start-namenode":
                cluster.restartNameNode(0, true);
                return "";
            case "safemode": {
                HdfsConstants.SafeModeAction a = f[1].equals("enter")
                        ? HdfsConstants.SafeModeAction.SAFEMODE_ENTER
                        : HdfsConstants.SafeModeAction.SAFEMODE_LEAVE;
                return String.valueOf(fs().setSafeMode(a));
            }
            case "space-quota": {
                long q = f[2].equals("clear") ? HdfsConstants.QUOTA_RESET : Long.parseLong(f[2]);
                fs().setQuota(new Path(f[1]), HdfsConstants.QUOTA_DONT_SET, q);
                return "";
            }
            case "mkdir": {
                Path p = new Path(f[1]);
                fs().mkdirs(p);
                fs().setOwner(p, f[2], f[2]);
                fs().setPermission(p, new FsPermission(Short.parseShort(f[3], 8)));
                return "";
            }
            case "cat": {
                try (InputStream r = fs().open(new Path(f[1]))) {
                    ByteArrayOutputStream b = new ByteArrayOutputStream();
                    r.transferTo(b);
                    return Base64.getEncoder().encodeToString(b.toByteArray());
                }
            }
            case "put": {
                byte[] data = Base64.getDecoder().decode(f.length > 2 ? f[2] : "");
                try (OutputStream w = fs().create(new Path(f[1]), true)) {
                    w.write(data);
                }
                return "";
            }
            case "ls": {
                StringBuilder b = new StringBuilder();
                for (FileStatus s : fs().listStatus(new Path(f[1]))) {
                    b.append(s.getPath().toUri().getPath()).append(s.isDirectory() ? "/" : "").append(',');
                }
                return b.toString();
            }
            default:
                throw new IllegalArgumentException("unknown command " + f[0]);
        }
    }
}
