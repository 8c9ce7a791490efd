// A Fluss RPC client in Java, built only from Debian's libprotobuf-java,
// protoc and our messages/fluss.proto. It frames and parses the way
// docs/protocol.md §1-2 describes the Fluss Java client (API_VERSIONS
// first with "fluss"/"0.1.0", request ids from 0 per connection, replies
// matched by id in any order, SUCCESS bodies parsed with required fields
// enforced, an unknown response type closes the connection), runs the
// compat_test scenario against a live sidecar and checks every reply
// against the golden vectors.
//
//   java -cp classes:/usr/share/java/protobuf.jar CompatClient \
//       --bootstrap 127.0.0.1:9123 --vectors compat_test/vectors [--tablet host:port] [--reference] [--sasl]
//
// --sasl runs the SASL scenario instead, against a listener with SASL/PLAIN
// user "user", password "pass": a login on the coordinator and on the tablet
// server, each then answering GET_METADATA.
// Every API_VERSIONS answer must carry the server_type of the node it was
// opened for (1 COORDINATOR, 2 TABLET_SERVER): the Java client closes a
// connection whose type differs, and fluss-go refuses one without a type.
// The tablet server is the one GET_METADATA names, or --tablet when that
// address is not reachable (the reference setup announces 127.0.0.1:9124).
// The bootstrap address may also come from $FLUSS_BOOTSTRAP. Prints
// PASS/FAIL per step and exits 1 on any failure.

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.flusssidecar.messages.FlussMessages.*;

public final class CompatClient {
    static final byte SUCCESS = 0, ERROR = 1, SERVER_FAILURE = 2;

    /** The response message of each api key we call (docs/protocol.md §5/§6). */
    static final Map<Integer, Parser<? extends Message>> RESPONSES = new HashMap<>();

    static {
        RESPONSES.put(1000, ApiVersionsResponse.parser());
        RESPONSES.put(1012, MetadataResponse.parser());
        RESPONSES.put(1038, AuthenticateResponse.parser());
        RESPONSES.put(1053, RegisterProducerOffsetsResponse.parser());
        RESPONSES.put(1054, GetProducerOffsetsResponse.parser());
        RESPONSES.put(1055, DeleteProducerOffsetsResponse.parser());
    }

    /** A reply frame: type byte, request id (none for SERVER_FAILURE), raw bytes. */
    static final class Reply {
        final byte type;
        final int requestId;
        final byte[] raw;
        final byte[] body;

        Reply(byte type, int requestId, byte[] raw, byte[] body) {
            this.type = type;
            this.requestId = requestId;
            this.raw = raw;
            this.body = body;
        }
    }

    /** One connection, numbered and matched like the Fluss Java client's. */
    static final class Conn implements AutoCloseable {
        final Socket socket;
        final DataInputStream in;
        final OutputStream out;
        int nextId = 0; // a per-connection int counter from 0 that wraps
        final Map<Integer, Reply> stash = new HashMap<>();
        final List<Integer> arrivals = new ArrayList<>();

        Conn(String bootstrap) throws IOException {
            int colon = bootstrap.lastIndexOf(':');
            socket = new Socket();
            socket.connect(new InetSocketAddress(bootstrap.substring(0, colon), Integer.parseInt(bootstrap.substring(colon + 1))), 30_000);
            socket.setSoTimeout(30_000); // only so that a broken server cannot hang the suite
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        }

        /** Frames a request (int32 length, int16 key, int16 version, int32 id, body). */
        byte[] frame(int apiKey, byte[] body) {
            ByteBuffer b = ByteBuffer.allocate(4 + 8 + body.length); // big-endian
            b.putInt(8 + body.length).putShort((short) apiKey).putShort((short) 0).putInt(nextId++).put(body);
            return b.array();
        }

        int lastId() {
            return nextId - 1;
        }

        void send(byte[] frames) throws IOException {
            out.write(frames);
            out.flush();
        }

        Reply readFrame() throws IOException {
            int length = in.readInt();
            if (length < 1) {
                close();
                throw new IOException("bad frame length " + length);
            }
            byte[] payload = new byte[length];
            in.readFully(payload);
            ByteBuffer raw = ByteBuffer.allocate(4 + length).putInt(length).put(payload);
            byte type = payload[0];
            switch (type) {
                case SUCCESS:
                case ERROR:
                    return new Reply(type, ByteBuffer.wrap(payload, 1, 4).getInt(), raw.array(), Arrays.copyOfRange(payload, 5, length));
                case SERVER_FAILURE:
                    return new Reply(type, -1, raw.array(), Arrays.copyOfRange(payload, 1, length));
                default:
                    close();
                    throw new IOException("unknown response type " + type + ": connection closed");
            }
        }

        /** Reads until the reply to id arrives; replies to other ids are kept. */
        Reply await(int id) throws IOException {
            while (!stash.containsKey(id)) {
                Reply r = readFrame();
                if (r.type == SERVER_FAILURE) {
                    close();
                    throw new IOException("SERVER_FAILURE " + hex(r.raw) + ": every request in flight fails");
                }
                arrivals.add(r.requestId);
                stash.put(r.requestId, r); // unknown ids would simply never be awaited
            }
            return stash.remove(id);
        }

        boolean closedByServer() throws IOException {
            try {
                return in.read() == -1;
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true; // reset
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** What a vector file says, read with three regular expressions (no JSON library in Debian's JDK). */
    static final class Vector {
        final String name;
        final byte[] raw;
        final String frame;
        final String exact;

        Vector(String name, String json) {
            this.name = name;
            this.raw = unhex(field(json, "hex"));
            this.frame = field(json, "frame");
            String e = json.contains("\n \"exact\":") ? field(json, "exact") : "always";
            this.exact = e;
        }

        byte[] body() {
            return Arrays.copyOfRange(raw, frame.equals("server_failure") ? 5 : 9, raw.length);
        }

        static String field(String json, String key) {
            Matcher m = Pattern.compile("(?m)^ \"" + key + "\": \"([^\"]*)\"").matcher(json);
            if (!m.find()) {
                throw new IllegalArgumentException("no top-level \"" + key + "\"");
            }
            return m.group(1);
        }
    }

    final Path vectorsDir;
    final boolean reference;
    final Map<String, Vector> vectors = new HashMap<>();
    int failed = 0;

    CompatClient(Path vectorsDir, boolean reference) throws IOException {
        this.vectorsDir = vectorsDir;
        this.reference = reference;
        try (var files = Files.list(vectorsDir.resolve("frames"))) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String n = p.getFileName().toString();
                if (n.endsWith(".json")) {
                    String name = n.substring(0, n.length() - 5);
                    vectors.put(name, new Vector(name, Files.readString(p, StandardCharsets.UTF_8)));
                }
            }
        }
    }

    Vector vec(String name) {
        Vector v = vectors.get(name);
        if (v == null) {
            throw new IllegalStateException("no vector " + name);
        }
        return v;
    }

    interface Step {
        void run() throws Exception;
    }

    void step(String name, Step s) {
        try {
            s.run();
            System.out.println("PASS " + name);
        } catch (Exception | AssertionError e) {
            failed++;
            System.out.println("FAIL " + name + ": " + e);
        }
    }

    static void check(boolean ok, String msg) {
        if (!ok) {
            throw new AssertionError(msg);
        }
    }

    /** Frames msg with the connection's next id and checks it against the request vector. */
    int request(Conn c, ByteArrayOutputStream batch, String vector, int apiKey, byte[] body) throws IOException {
        byte[] frame = c.frame(apiKey, body);
        byte[] want = vec(vector).raw;
        check(Arrays.equals(frame, want), "request " + vector + ": we encode " + hex(frame) + ", vector " + hex(want));
        batch.write(frame);
        return c.lastId();
    }

    void checkReply(Integer apiKey, int id, Reply r, String vector) throws InvalidProtocolBufferException {
        Vector v = vec(vector);
        String kind = r.type == SUCCESS ? "success" : r.type == ERROR ? "error" : "server_failure";
        check(kind.equals(v.frame), vector + ": got a " + kind + " frame " + hex(r.raw) + ", want " + hex(v.raw));
        if (r.type != SERVER_FAILURE) {
            check(r.requestId == id, vector + ": reply id " + r.requestId + ", want " + id);
        }
        Message got = null;
        if (r.type == SUCCESS) {
            // parseFrom enforces required fields, nested ones included.
            got = RESPONSES.get(apiKey).parseFrom(r.body);
        }
        if (got instanceof ApiVersionsResponse) {
            // The server type of the node the connection was opened for:
            // the vector's. A mismatch closes the connection (Java), an
            // absent type refuses it (fluss-go).
            ApiVersionsResponse g = (ApiVersionsResponse) got;
            int want = ApiVersionsResponse.parseFrom(v.body()).getServerType();
            check(g.hasServerType() && g.getServerType() == want, vector + ": server_type "
                    + (g.hasServerType() ? String.valueOf(g.getServerType()) : "absent") + ", want " + want);
        }
        if (v.exact.equals("always") || (v.exact.equals("reference") && reference)) {
            check(Arrays.equals(r.raw, v.raw), vector + ": got  " + hex(r.raw) + "\n     want " + hex(v.raw));
            return;
        }
        if (v.exact.equals("code")) {
            ErrorResponse g = ErrorResponse.parseFrom(r.body);
            ErrorResponse w = ErrorResponse.parseFrom(v.body());
            check(g.getErrorCode() == w.getErrorCode(), vector + ": error code " + g.getErrorCode() + ", want " + w.getErrorCode());
            return;
        }
        Message want = RESPONSES.get(apiKey).parseFrom(v.body());
        if (got instanceof GetProducerOffsetsResponse) {
            GetProducerOffsetsResponse g = (GetProducerOffsetsResponse) got;
            check(g.hasExpirationTime() && g.getExpirationTime() > 0, vector + ": expiration_time missing or not positive");
            got = g.toBuilder().clearExpirationTime().build();
            want = ((GetProducerOffsetsResponse) want).toBuilder().clearExpirationTime().build();
        } else if (got instanceof MetadataResponse) {
            MetadataResponse g = (MetadataResponse) got;
            check(g.hasCoordinatorServer() && g.getTabletServersCount() > 0 && g.getPartitionMetadataCount() == 0,
                    vector + ": a Java client cannot bootstrap from " + g);
            PbServerNode co = g.getCoordinatorServer(), ts = g.getTabletServers(0);
            check(!(co.getHost().equals(ts.getHost()) && co.getPort() == ts.getPort()),
                    vector + ": the tablet server is the coordinator's port; a type-checking client cannot connect to both: " + g);
            return;
        }
        check(got.equals(want), vector + ": got " + got + ", want " + want);
    }

    Reply call(Conn c, int apiKey, String requestVector, MessageLite msg, String replyVector) throws Exception {
        return call(c, apiKey, requestVector, msg.toByteArray(), replyVector);
    }

    Reply call(Conn c, int apiKey, String requestVector, byte[] body, String replyVector) throws Exception {
        ByteArrayOutputStream batch = new ByteArrayOutputStream();
        int id = request(c, batch, requestVector, apiKey, body);
        c.send(batch.toByteArray());
        Reply r = c.await(id);
        checkReply(apiKey, id, r, replyVector);
        return r;
    }

    void handshake(Conn c) throws Exception {
        ApiVersionsRequest req = ApiVersionsRequest.newBuilder()
                .setClientSoftwareName("fluss").setClientSoftwareVersion("0.1.0").build();
        call(c, 1000, "api_versions_request", req, "api_versions_response");
    }

    static RegisterProducerOffsetsRequest register(String pid, long tableId, long[][] buckets) {
        RegisterProducerOffsetsRequest.Builder b = RegisterProducerOffsetsRequest.newBuilder().setProducerId(pid);
        if (buckets.length > 0) {
            PbProducerTableOffsets.Builder t = PbProducerTableOffsets.newBuilder().setTableId(tableId);
            for (long[] x : buckets) { // {partition or -1, bucket, offset}
                PbBucketOffset.Builder o = PbBucketOffset.newBuilder().setBucketId((int) x[1]).setLogEndOffset(x[2]);
                if (x[0] >= 0) {
                    o.setPartitionId(x[0]);
                }
                t.addBucketOffsets(o);
            }
            b.addTableOffsets(t);
        }
        return b.build();
    }

    static GetProducerOffsetsRequest get(String pid) {
        return GetProducerOffsetsRequest.newBuilder().setProducerId(pid).build();
    }

    static DeleteProducerOffsetsRequest delete(String pid) {
        return DeleteProducerOffsetsRequest.newBuilder().setProducerId(pid).build();
    }

    void run(String addr, String tablet) throws IOException {
        long[][] nonpart = {{-1, 0, 42}, {-1, 1, 7}};
        List<Reply> metadata = new ArrayList<>();
        long[][] part = {{5, 0, 9}, {6, 1, 11}};

        step("preclean: delete job-1, job-2, job-3", () -> {
            try (Conn c = new Conn(addr)) {
                handshake(c);
                for (String pid : new String[] {"job-1", "job-2", "job-3"}) {
                    c.send(c.frame(1055, delete(pid).toByteArray()));
                    Reply r = c.await(c.lastId());
                    check(r.type == SUCCESS && r.body.length == 0, "delete " + pid + ": " + hex(r.raw));
                }
            }
        });

        try (Conn c = new Conn(addr)) {
            step("handshake: API_VERSIONS fluss/0.1.0 as request 0", () -> handshake(c));
            step("GET_METADATA (empty request)", () -> metadata.add(call(c, 1012, "metadata_request_empty",
                    MetadataRequest.getDefaultInstance(), "metadata_response")));
            step("register job-1 -> CREATED", () -> call(c, 1053, "register_request_nonpartitioned",
                    register("job-1", 100, nonpart), "register_response_created"));
            step("register job-1 again -> ALREADY_EXISTS", () -> call(c, 1053, "register_request_again",
                    register("job-1", 100, nonpart), "register_response_already_exists"));
            step("get job-1 -> found", () -> call(c, 1054, "get_request", get("job-1"), "get_response_nonpartitioned"));
            step("get job-missing -> not found (empty body)", () -> {
                call(c, 1054, "get_request_missing", get("job-missing"), "get_response_not_found");
            });
            step("delete job-1", () -> call(c, 1055, "delete_request", delete("job-1"), "delete_response"));
            step("get 'a b' -> error 63", () -> call(c, 1054, "get_request_invalid_id", get("a b"),
                    "error_63_invalid_producer_id"));
            step("pipelined: 5 requests sent before any reply, matched by id", () -> {
                ByteArrayOutputStream batch = new ByteArrayOutputStream();
                Object[][] sends = {
                    {1053, "register_request_partitioned", register("job-2", 200, part).toByteArray(), "register_response_created_8"},
                    {1053, "register_request_empty", register("job-3", 0, new long[0][]).toByteArray(), "register_response_created_9"},
                    {1055, "delete_request_missing", delete("job-missing").toByteArray(), "delete_response_10"},
                    {1053, "register_request_invalid_dot", register(".", 0, new long[0][]).toByteArray(), "error_63_dot"},
                    {1001, "create_database_request", new byte[0], "error_2_not_served"},
                };
                int[] ids = new int[sends.length];
                for (int i = 0; i < sends.length; i++) {
                    ids[i] = request(c, batch, (String) sends[i][1], (Integer) sends[i][0], (byte[]) sends[i][2]);
                }
                c.send(batch.toByteArray()); // all five before reading any reply
                for (int i = 0; i < sends.length; i++) {
                    checkReply((Integer) sends[i][0], ids[i], c.await(ids[i]), (String) sends[i][3]);
                }
                System.out.println("     replies arrived in request-id order " + c.arrivals.subList(c.arrivals.size() - 5, c.arrivals.size()));
            });
            step("get job-2 -> partitioned", () -> call(c, 1054, "get_request_partitioned", get("job-2"), "get_response_partitioned"));
            step("get job-3 -> found, no tables", () -> call(c, 1054, "get_request_empty", get("job-3"), "get_response_empty"));
            step("malformed register body -> error 3, connection open", () -> call(c, 1053, "register_request_malformed",
                    new byte[] {0x0A, 0x7F}, "error_3_malformed"));
            step("delete job-2", () -> call(c, 1055, "delete_request_partitioned", delete("job-2"), "delete_response_16"));
            step("delete job-3", () -> call(c, 1055, "delete_request_empty", delete("job-3"), "delete_response_17"));
        }

        step("AUTHENTICATE on PLAINTEXT: PLAIN -> 46, PLAINTEXT -> empty", () -> {
            try (Conn c = new Conn(addr)) {
                handshake(c);
                call(c, 1038, "authenticate_request_plain", AuthenticateRequest.newBuilder().setProtocol("PLAIN")
                        .setToken(ByteString.copyFrom("\0user\0pass", StandardCharsets.UTF_8)).build(), "error_46_plaintext");
                call(c, 1038, "authenticate_request_plaintext", AuthenticateRequest.newBuilder().setProtocol("PLAINTEXT")
                        .setToken(ByteString.EMPTY).build(), "authenticate_response_plaintext");
            }
        });

        step("tablet server: server_type 2, same metadata, REGISTER -> error 2", () -> {
            String where = tabletAddress(tablet, metadata);
            try (Conn c = new Conn(where)) {
                call(c, 1000, "api_versions_request", ApiVersionsRequest.newBuilder()
                        .setClientSoftwareName("fluss").setClientSoftwareVersion("0.1.0").build(), "tablet_api_versions_response");
                call(c, 1012, "metadata_request_empty", MetadataRequest.getDefaultInstance(), "metadata_response");
                call(c, 1053, "register_request_nonpartitioned", register("job-1", 100, nonpart), "tablet_error_2_elsewhere");
            }
        });

        step("negative frame length -> SERVER_FAILURE(-1), then close", () -> {
            try (Conn c = new Conn(addr)) {
                c.send(vec("negative_length_frame").raw);
                Reply r = c.readFrame();
                checkReply(null, -1, r, "server_failure_negative_length");
                check(c.closedByServer(), "the connection stayed open after SERVER_FAILURE");
            }
        });
    }

    /** The tablet server to reach: the one given, else the first one GET_METADATA named. */
    String tabletAddress(String tablet, List<Reply> metadata) throws Exception {
        if (tablet != null) {
            return tablet;
        }
        check(!metadata.isEmpty(), "no GET_METADATA answer names the tablet server");
        PbServerNode ts = MetadataResponse.parseFrom(metadata.get(0).body).getTabletServers(0);
        return ts.getHost() + ":" + ts.getPort();
    }

    void login(Conn c, String versionsVector) throws Exception {
        call(c, 1000, "api_versions_request", ApiVersionsRequest.newBuilder()
                .setClientSoftwareName("fluss").setClientSoftwareVersion("0.1.0").build(), versionsVector);
        call(c, 1038, "authenticate_request_plain", AuthenticateRequest.newBuilder().setProtocol("PLAIN")
                .setToken(ByteString.copyFrom("\0user\0pass", StandardCharsets.UTF_8)).build(), "authenticate_response_plain");
    }

    void runSasl(String addr, String tablet) throws IOException {
        List<Reply> metadata = new ArrayList<>();
        step("SASL coordinator: server_type 1, PLAIN login, GET_METADATA", () -> {
            try (Conn c = new Conn(addr)) {
                login(c, "api_versions_response");
                metadata.add(call(c, 1012, "metadata_request_after_login", MetadataRequest.getDefaultInstance(),
                        "metadata_response_after_login"));
            }
        });
        step("SASL tablet server: server_type 2, PLAIN login, GET_METADATA", () -> {
            String where = tabletAddress(tablet, metadata);
            try (Conn c = new Conn(where)) {
                login(c, "tablet_api_versions_response");
                call(c, 1012, "metadata_request_after_login", MetadataRequest.getDefaultInstance(), "metadata_response_after_login");
            }
        });
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < b.length; i++) {
            s.append(i == 0 ? "" : " ").append(String.format("%02x", b[i] & 0xff));
        }
        return s.toString();
    }

    static byte[] unhex(String s) {
        String t = s.replace(" ", "");
        byte[] out = new byte[t.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(t.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = System.getenv("FLUSS_BOOTSTRAP");
        String vectors = "compat_test/vectors";
        boolean reference = false;
        String tablet = null;
        boolean sasl = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bootstrap": bootstrap = args[++i]; break;
                case "--vectors": vectors = args[++i]; break;
                case "--reference": reference = true; break;
                case "--tablet": tablet = args[++i]; break;
                case "--sasl": sasl = true; break;
                default:
                    System.err.println("usage: CompatClient --bootstrap host:port [--vectors dir] [--tablet host:port] [--reference] [--sasl]");
                    System.exit(2);
            }
        }
        if (bootstrap == null || bootstrap.isEmpty()) {
            System.err.println("--bootstrap or $FLUSS_BOOTSTRAP is required");
            System.exit(2);
        }
        CompatClient suite = new CompatClient(Paths.get(vectors), reference);
        System.out.println("java client (protobuf-java " + System.getProperty("compat.protobuf.version", "?")
                + ", Java " + System.getProperty("java.version") + ") against " + bootstrap + (reference ? " in the reference setup" : ""));
        if (sasl) {
            suite.runSasl(bootstrap, tablet);
        } else {
            suite.run(bootstrap, tablet);
        }
        if (suite.failed > 0) {
            System.out.println("FAIL java: " + suite.failed + " step(s) failed");
            System.exit(1);
        }
        System.out.println("PASS java: all steps");
    }
}
