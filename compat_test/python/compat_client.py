#!/usr/bin/env python3
"""A Fluss RPC client in Python, built only from Debian's python3-protobuf,
protoc and our messages/fluss.proto, that runs the compat_test scenario
against a live sidecar and checks every reply against the golden vectors.

    compat_client.py --bootstrap 127.0.0.1:9123 [--tablet host:port] [--reference] [--sasl]

The bootstrap address may also come from $FLUSS_BOOTSTRAP. --reference says
the sidecar runs in the reference setup of vectors/gen_vectors.py (clock
fixed at 1735538268000 ms, ttl 24 h, advertised FLUSS://127.0.0.1:9123,
node id 0), so that even replies carrying the clock or the address are
compared byte for byte. Every API_VERSIONS answer must carry server_type,
and the one GET_METADATA gives each node (1 COORDINATOR, 2 TABLET_SERVER), as
fluss-go requires and Fluss's Java client checks. The tablet server is the
one GET_METADATA names, or --tablet when that address is not reachable (the
reference setup announces 127.0.0.1:9124). --sasl runs the SASL scenario
instead, against a listener with SASL/PLAIN user "user", password "pass":
a login on the coordinator and on the tablet server, each then answering
GET_METADATA. Prints PASS/FAIL per step; exits 1 on any failure.
"""

import argparse
import glob
import importlib
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SUCCESS, ERROR, SERVER_FAILURE = 0, 1, 2


class ProtocolError(Exception):
    pass


def load_proto(proto, build):
    """protoc --python_out into build, then import the generated module."""
    subprocess.run(["protoc", "--proto_path=" + os.path.dirname(proto), "--python_out=" + build, proto], check=True)
    sys.path.insert(0, build)
    return importlib.import_module(os.path.basename(proto)[:-len(".proto")] + "_pb2")


class Conn:
    """One connection: request ids from 0, replies matched by id in any
    order, as the Fluss Java client does (docs/protocol.md §1-2)."""

    def __init__(self, addr, timeout=30):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.next_id = 0
        self.stash = {}  # request id -> (type, raw frame) read while waiting for another id
        self.arrivals = []

    def frame_request(self, api_key, body, version=0):
        rid = self.next_id
        self.next_id = (self.next_id + 1) & 0xFFFFFFFF
        payload = struct.pack(">hhi", api_key, version, rid if rid < 2**31 else rid - 2**32) + body
        return rid, struct.pack(">i", len(payload)) + payload

    def send_raw(self, data):
        self.sock.sendall(data)

    def _read_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ProtocolError("connection closed by the server after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return buf

    def read_frame(self):
        head = self._read_exact(4)
        (length,) = struct.unpack(">i", head)
        if length < 1:
            raise ProtocolError("bad frame length %d" % length)
        payload = self._read_exact(length)
        t = payload[0]
        if t not in (SUCCESS, ERROR, SERVER_FAILURE):
            self.close()
            raise ProtocolError("unknown response type %d: connection closed" % t)
        return t, head + payload

    def await_reply(self, rid):
        while rid not in self.stash:
            t, raw = self.read_frame()
            if t == SERVER_FAILURE:
                raise ProtocolError("SERVER_FAILURE: %s" % raw.hex(" "))
            (got,) = struct.unpack(">i", raw[5:9])
            self.arrivals.append(got)
            self.stash[got] = (t, raw)
        return self.stash.pop(rid)

    def expect_eof(self):
        try:
            data = self.sock.recv(1)
        except (ConnectionResetError, socket.timeout) as e:
            return isinstance(e, ConnectionResetError)
        return data == b""

    def close(self):
        self.sock.close()


class Suite:
    def __init__(self, pb, vectors_dir, reference):
        self.pb = pb
        self.reference = reference
        self.failed = 0
        self.vectors = {}
        for path in glob.glob(os.path.join(vectors_dir, "frames", "*.json")):
            with open(path) as f:
                v = json.load(f)
            self.vectors[v["name"]] = v
        self.response_type = {}
        with open(os.path.join(vectors_dir, "api_keys.pin")) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    key, _, _, _, _, resp = line.split()
                    self.response_type[int(key)] = getattr(pb, resp)

    def vec(self, name):
        return bytes.fromhex(self.vectors[name]["hex"])

    def step(self, name, fn):
        try:
            fn()
            print("PASS %s" % name)
        except Exception as e:  # a failed step is reported, the run goes on
            self.failed += 1
            print("FAIL %s: %s" % (name, e))

    # -- requests: built with the generated classes, checked against the vector

    def request(self, conn, vector, api_key, msg):
        body = msg if isinstance(msg, bytes) else msg.SerializeToString()
        rid, frame = conn.frame_request(api_key, body)
        want = self.vec(vector)
        if frame != want:
            raise AssertionError("request %s: we encode %s, vector %s" % (vector, frame.hex(" "), want.hex(" ")))
        return rid, frame

    # -- replies

    def parse_strict(self, cls, body, what):
        m = cls()
        m.ParseFromString(body)
        if not m.IsInitialized():
            raise AssertionError("%s: required fields missing: %s" % (what, m.FindInitializationErrors()))
        return m

    def check(self, api_key, rid, t, raw, vector):
        v = self.vectors[vector]
        want = self.vec(vector)
        kind = {SUCCESS: "success", ERROR: "error", SERVER_FAILURE: "server_failure"}[t]
        if kind != v["frame"]:
            raise AssertionError("%s: got a %s frame %s, want %s" % (vector, kind, raw.hex(" "), want.hex(" ")))
        body = raw[5:] if t == SERVER_FAILURE else raw[9:]
        if t != SERVER_FAILURE:
            (got_id,) = struct.unpack(">i", raw[5:9])
            if got_id != rid:
                raise AssertionError("%s: reply id %d, want %d" % (vector, got_id, rid))
        if t == SUCCESS:
            m = self.parse_strict(self.response_type[api_key], body, vector)
            if api_key == 1000:
                # fluss-go's rule: no server_type, or another type than the
                # node's, and the connection is refused.
                want_type = v["decoded"]["server_type"]
                if not m.HasField("server_type") or m.server_type != want_type:
                    raise AssertionError("%s: server_type %s, want %d" % (
                        vector, m.server_type if m.HasField("server_type") else "absent", want_type))
        mode = v["exact"]
        if mode == "always" or (mode == "reference" and self.reference):
            if raw != want:
                raise AssertionError("%s: got  %s\nwant %s" % (vector, raw.hex(" "), want.hex(" ")))
            return
        if mode == "code":
            got_err = self.parse_strict(self.pb.ErrorResponse, body, vector)
            if got_err.error_code != v["decoded"]["error_code"]:
                raise AssertionError("%s: error code %d, want %d" % (vector, got_err.error_code, v["decoded"]["error_code"]))
            return
        # "reference" against an arbitrary sidecar: compare decoded fields,
        # except the clock-dependent and address-dependent ones.
        cls = self.response_type[api_key]
        got = self.parse_strict(cls, body, vector)
        exp = self.parse_strict(cls, want[9:], vector)
        if cls is self.pb.GetProducerOffsetsResponse:
            if not got.HasField("expiration_time") or got.expiration_time <= 0:
                raise AssertionError("%s: expiration_time missing or not positive" % vector)
            got.ClearField("expiration_time")
            exp.ClearField("expiration_time")
        elif cls is self.pb.MetadataResponse:
            if not got.HasField("coordinator_server") or len(got.tablet_servers) == 0 or len(got.partition_metadata) > 0:
                raise AssertionError("%s: a Java client cannot bootstrap from %s" % (vector, got))
            c, ts = got.coordinator_server, got.tablet_servers[0]
            if (c.host, c.port) == (ts.host, ts.port):
                raise AssertionError("%s: the tablet server is the coordinator's port; a type-checking client "
                                     "cannot connect to both: %s" % (vector, got))
            return
        if got != exp:
            raise AssertionError("%s: got %s, want %s" % (vector, got, exp))

    def call(self, conn, api_key, request_vector, msg, reply_vector):
        rid, frame = self.request(conn, request_vector, api_key, msg)
        conn.send_raw(frame)
        t, raw = conn.await_reply(rid)
        self.check(api_key, rid, t, raw, reply_vector)
        return raw

    # -- the scenario

    def handshake(self, conn):
        pb = self.pb
        req = pb.ApiVersionsRequest(client_software_name="fluss", client_software_version="0.1.0")
        self.call(conn, 1000, "api_versions_request", req, "api_versions_response")

    def run(self, addr, tablet=None):
        pb = self.pb
        metadata = []

        # Remove what an earlier, interrupted run may have left.
        def preclean():
            c = Conn(addr)
            try:
                self.handshake(c)
                for pid in ("job-1", "job-2", "job-3"):
                    rid, frame = c.frame_request(1055, pb.DeleteProducerOffsetsRequest(producer_id=pid).SerializeToString())
                    c.send_raw(frame)
                    t, raw = c.await_reply(rid)
                    if t != SUCCESS or len(raw) != 9:
                        raise AssertionError("delete %s: %s" % (pid, raw.hex(" ")))
            finally:
                c.close()
        self.step("preclean: delete job-1, job-2, job-3", preclean)

        c = Conn(addr)

        def reg(pid, tables):
            m = pb.RegisterProducerOffsetsRequest(producer_id=pid)
            for table_id, buckets in tables:
                t = m.table_offsets.add(table_id=table_id)
                for partition, bucket, offset in buckets:
                    b = t.bucket_offsets.add(bucket_id=bucket, log_end_offset=offset)
                    if partition is not None:
                        b.partition_id = partition
            return m

        nonpart = [(100, [(None, 0, 42), (None, 1, 7)])]
        part = [(200, [(5, 0, 9), (6, 1, 11)])]
        get = lambda pid: pb.GetProducerOffsetsRequest(producer_id=pid)
        delete = lambda pid: pb.DeleteProducerOffsetsRequest(producer_id=pid)

        self.step("handshake: API_VERSIONS fluss/0.1.0 as request 0", lambda: self.handshake(c))
        self.step("GET_METADATA (empty request)", lambda: metadata.append(self.call(
            c, 1012, "metadata_request_empty", pb.MetadataRequest(), "metadata_response")))
        self.step("register job-1 -> CREATED", lambda: self.call(
            c, 1053, "register_request_nonpartitioned", reg("job-1", nonpart), "register_response_created"))
        self.step("register job-1 again -> ALREADY_EXISTS", lambda: self.call(
            c, 1053, "register_request_again", reg("job-1", nonpart), "register_response_already_exists"))
        self.step("get job-1 -> found", lambda: self.call(
            c, 1054, "get_request", get("job-1"), "get_response_nonpartitioned"))
        self.step("get job-missing -> not found (empty body)", lambda: self.call(
            c, 1054, "get_request_missing", get("job-missing"), "get_response_not_found"))
        self.step("delete job-1", lambda: self.call(c, 1055, "delete_request", delete("job-1"), "delete_response"))
        self.step("get 'a b' -> error 63", lambda: self.call(
            c, 1054, "get_request_invalid_id", get("a b"), "error_63_invalid_producer_id"))

        def pipelined():
            sends = [
                (1053, "register_request_partitioned", reg("job-2", part), "register_response_created_8"),
                (1053, "register_request_empty", reg("job-3", []), "register_response_created_9"),
                (1055, "delete_request_missing", delete("job-missing"), "delete_response_10"),
                (1053, "register_request_invalid_dot", reg(".", []), "error_63_dot"),
                (1001, "create_database_request", b"", "error_2_not_served"),
            ]
            batch, expect = b"", []
            for key, rv, msg, reply in sends:
                rid, frame = self.request(c, rv, key, msg)
                batch += frame
                expect.append((key, rid, reply))
            c.send_raw(batch)  # all five before reading any reply
            for key, rid, reply in expect:
                t, raw = c.await_reply(rid)
                self.check(key, rid, t, raw, reply)
            print("     replies arrived in request-id order %s" % c.arrivals[-5:])
        self.step("pipelined: 5 requests sent before any reply, matched by id", pipelined)

        self.step("get job-2 -> partitioned", lambda: self.call(
            c, 1054, "get_request_partitioned", get("job-2"), "get_response_partitioned"))
        self.step("get job-3 -> found, no tables", lambda: self.call(
            c, 1054, "get_request_empty", get("job-3"), "get_response_empty"))
        self.step("malformed register body -> error 3, connection open", lambda: self.call(
            c, 1053, "register_request_malformed", bytes([0x0A, 0x7F]), "error_3_malformed"))
        self.step("delete job-2", lambda: self.call(
            c, 1055, "delete_request_partitioned", delete("job-2"), "delete_response_16"))
        self.step("delete job-3", lambda: self.call(
            c, 1055, "delete_request_empty", delete("job-3"), "delete_response_17"))
        c.close()

        def auth():
            a = Conn(addr)
            try:
                self.handshake(a)
                self.call(a, 1038, "authenticate_request_plain",
                          pb.AuthenticateRequest(protocol="PLAIN", token=b"\x00user\x00pass"), "error_46_plaintext")
                self.call(a, 1038, "authenticate_request_plaintext",
                          pb.AuthenticateRequest(protocol="PLAINTEXT", token=b""), "authenticate_response_plaintext")
            finally:
                a.close()
        self.step("AUTHENTICATE on PLAINTEXT: PLAIN -> 46, PLAINTEXT -> empty", auth)

        def tablet_server():
            where = self.tablet_address(tablet, metadata, "metadata_response")
            s = Conn(where)
            try:
                self.call(s, 1000, "api_versions_request",
                          pb.ApiVersionsRequest(client_software_name="fluss", client_software_version="0.1.0"),
                          "tablet_api_versions_response")
                self.call(s, 1012, "metadata_request_empty", pb.MetadataRequest(), "metadata_response")
                self.call(s, 1053, "register_request_nonpartitioned",
                          reg("job-1", nonpart), "tablet_error_2_elsewhere")
            finally:
                s.close()
        self.step("tablet server: server_type 2, same metadata, REGISTER -> error 2", tablet_server)

        def failure():
            f = Conn(addr)
            try:
                f.send_raw(self.vec("negative_length_frame"))
                t, raw = f.read_frame()
                self.check(None, None, t, raw, "server_failure_negative_length")
                if not f.expect_eof():
                    raise AssertionError("the connection stayed open after SERVER_FAILURE")
            finally:
                f.close()
        self.step("negative frame length -> SERVER_FAILURE(-1), then close", failure)


    def tablet_address(self, tablet, metadata, vector):
        """The tablet server to reach: the one given, else the first one the
        GET_METADATA answer in metadata named (decoded strictly as vector)."""
        if tablet is not None:
            return tablet
        if not metadata:
            raise AssertionError("no GET_METADATA answer names the tablet server")
        ts = self.parse_strict(self.pb.MetadataResponse, metadata[0][9:], vector).tablet_servers[0]
        return "%s:%d" % (ts.host, ts.port)

    def run_sasl(self, addr, tablet=None):
        """The "sasl" scenario: both endpoints take a PLAIN login, then serve."""
        pb = self.pb
        metadata = []

        def login(conn, versions_vector):
            self.call(conn, 1000, "api_versions_request",
                      pb.ApiVersionsRequest(client_software_name="fluss", client_software_version="0.1.0"), versions_vector)
            self.call(conn, 1038, "authenticate_request_plain",
                      pb.AuthenticateRequest(protocol="PLAIN", token=b"\x00user\x00pass"), "authenticate_response_plain")

        def coordinator():
            c = Conn(addr)
            try:
                login(c, "api_versions_response")
                metadata.append(self.call(c, 1012, "metadata_request_after_login", pb.MetadataRequest(),
                                          "metadata_response_after_login"))
            finally:
                c.close()
        self.step("SASL coordinator: server_type 1, PLAIN login, GET_METADATA", coordinator)

        def tablet_server():
            where = self.tablet_address(tablet, metadata, "metadata_response_after_login")
            s = Conn(where)
            try:
                login(s, "tablet_api_versions_response")
                self.call(s, 1012, "metadata_request_after_login", pb.MetadataRequest(), "metadata_response_after_login")
            finally:
                s.close()
        self.step("SASL tablet server: server_type 2, PLAIN login, GET_METADATA", tablet_server)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bootstrap", default=os.environ.get("FLUSS_BOOTSTRAP"), help="sidecar host:port")
    ap.add_argument("--vectors", default=os.path.join(ROOT, "compat_test", "vectors"))
    ap.add_argument("--proto", default=os.path.join(ROOT, "messages", "fluss.proto"))
    ap.add_argument("--build", help="directory for the generated code (default: a temporary one)")
    ap.add_argument("--reference", action="store_true", help="the sidecar runs in the reference setup")
    ap.add_argument("--tablet", help="the tablet server's host:port (default: the one GET_METADATA names)")
    ap.add_argument("--sasl", action="store_true", help="run the SASL scenario (user \"user\", password \"pass\")")
    args = ap.parse_args()
    if not args.bootstrap:
        ap.error("--bootstrap or $FLUSS_BOOTSTRAP is required")
    build = args.build or tempfile.mkdtemp(prefix="compat-python-")
    os.makedirs(build, exist_ok=True)
    pb = load_proto(os.path.abspath(args.proto), build)
    suite = Suite(pb, args.vectors, args.reference)
    print("python client (protobuf %s) against %s%s" % (
        importlib.import_module("google.protobuf").__version__, args.bootstrap,
        " in the reference setup" if args.reference else ""))
    if args.sasl:
        suite.run_sasl(args.bootstrap, args.tablet)
    else:
        suite.run(args.bootstrap, args.tablet)
    if suite.failed:
        print("FAIL python: %d step(s) failed" % suite.failed)
        return 1
    print("PASS python: all steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
