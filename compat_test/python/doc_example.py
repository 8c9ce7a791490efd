#!/usr/bin/env python3
"""doc_example.py runs the pytest-style tests of a Python file (the control
API example that TestDocsPythonExample cuts out of docs/embedded.md, as it
stands) the way pytest would run them, without pytest:

    doc_example.py --bootstrap HOST:PORT EXAMPLE.py

Each test_* function, in the order of the file, gets a `client`: a small
client of the producer-offsets calls over compat_client.py's raw protocol,
which retries an answer of 25 (REQUEST_TIME_OUT) once, as a Fluss client's
retry would. teardown_function, if defined, runs after each test. The
control API's address reaches the example through FLUSS_SIDECAR_CONTROL.
Prints `PASS <test>` or `FAIL <test> <error>` per test and a RESULT line;
exit status 1 when a test failed or none ran.
"""

import importlib.util
import inspect
import os
import sys
import tempfile
import traceback

import compat_client

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REGISTER, GET = 1053, 1054


class Client:
    """register_producer_offsets(producer, {(table, bucket): offset}) and
    get_producer_offsets(producer) -> the same dict, or None when absent."""

    def __init__(self, pb, bootstrap):
        self.pb = pb
        self.conn = compat_client.Conn(bootstrap)

    def call(self, key, msg, resp_cls):
        rid, frame = self.conn.frame_request(key, msg.SerializeToString())
        self.conn.send_raw(frame)
        t, raw = self.conn.await_reply(rid)
        if t == compat_client.SUCCESS:
            m = resp_cls()
            m.ParseFromString(raw[9:])
            return m
        e = self.pb.ErrorResponse()
        e.ParseFromString(raw[9:])
        raise FlussError(e.error_code, e.error_message)

    def register_producer_offsets(self, producer, offsets):
        m = self.pb.RegisterProducerOffsetsRequest(producer_id=producer)
        tables = {}
        for (table, bucket), offset in sorted(offsets.items()):
            if table not in tables:
                tables[table] = m.table_offsets.add(table_id=table)
            tables[table].bucket_offsets.add(bucket_id=bucket, log_end_offset=offset)
        return self.call(REGISTER, m, self.pb.RegisterProducerOffsetsResponse).result

    def get_producer_offsets(self, producer):
        req = self.pb.GetProducerOffsetsRequest(producer_id=producer)
        try:
            m = self.call(GET, req, self.pb.GetProducerOffsetsResponse)
        except FlussError as e:
            if e.code != 25:
                raise
            m = self.call(GET, req, self.pb.GetProducerOffsetsResponse)  # the retry
        if not m.HasField("producer_id"):
            return None
        return {(t.table_id, b.bucket_id): b.log_end_offset for t in m.table_offsets for b in t.bucket_offsets}

    def close(self):
        self.conn.close()


class FlussError(Exception):
    def __init__(self, code, message):
        super().__init__("Fluss error %d: %s" % (code, message))
        self.code = code


def main(argv):
    if len(argv) != 3 or argv[0] != "--bootstrap":
        print("usage: doc_example.py --bootstrap HOST:PORT EXAMPLE.py", file=sys.stderr)
        return 2
    bootstrap, path = argv[1], argv[2]
    pb = compat_client.load_proto(os.path.join(ROOT, "messages", "fluss.proto"), tempfile.mkdtemp(prefix="doc-example-"))
    spec = importlib.util.spec_from_file_location("doc_example_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tests = sorted(
        (f for n, f in vars(mod).items() if n.startswith("test_") and inspect.isfunction(f)),
        key=lambda f: f.__code__.co_firstlineno,
    )
    teardown = getattr(mod, "teardown_function", None)
    failed = 0
    for test in tests:
        client = Client(pb, bootstrap)
        try:
            test(client)
            print("PASS %s" % test.__name__, flush=True)
        except Exception as e:  # noqa: BLE001: a failed test is reported, the run goes on
            failed += 1
            print("FAIL %s %s: %s" % (test.__name__, type(e).__name__, e), flush=True)
            traceback.print_exc()
        finally:
            client.close()
            if teardown is not None:
                teardown()
    ok = failed == 0 and tests
    print("RESULT %s tests=%d" % ("PASS" if ok else "FAIL", len(tests)), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
