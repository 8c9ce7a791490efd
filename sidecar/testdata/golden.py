#!/usr/bin/env python3
"""Derives the golden frames in this directory from the field tables of
docs/protocol.md §1 and §6 by hand: protobuf tags, varints and lengths are spelled out
here, independently of the Go encoder the tests check. Run it to regenerate
the .hex files; the tests never run it."""


def varint(n):
    if n < 0:
        n += 1 << 64  # negative int32/int64: 10-byte two's complement varint
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def tag(field, wire_type):
    return varint(field << 3 | wire_type)


def f_varint(field, n):
    return tag(field, 0) + varint(n)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return tag(field, 2) + varint(len(b)) + b


def be(n, size):
    return n.to_bytes(size, "big", signed=True)


def request(api_key, version, request_id, body):
    payload = be(api_key, 2) + be(version, 2) + be(request_id, 4) + body
    return be(len(payload), 4) + payload


def success(request_id, body):
    payload = be(0, 1) + be(request_id, 4) + body
    return be(len(payload), 4) + payload


def error(request_id, code, message=None):
    body = f_varint(1, code) + (f_bytes(2, message) if message is not None else b"")
    payload = be(1, 1) + be(request_id, 4) + body
    return be(len(payload), 4) + payload


def server_failure(code, message=None):
    body = f_varint(1, code) + (f_bytes(2, message) if message is not None else b"")
    payload = be(2, 1) + body
    return be(len(payload), 4) + payload


# PbBucketOffset: 1 partition_id, 2 bucket_id, 4 log_end_offset
def bucket(bucket_id, offset, partition=None):
    b = b""
    if partition is not None:
        b += f_varint(1, partition)
    return b + f_varint(2, bucket_id) + f_varint(4, offset)


# PbProducerTableOffsets: 1 table_id, 2 bucket_offsets
def table(table_id, buckets):
    return f_varint(1, table_id) + b"".join(f_bytes(2, b) for b in buckets)


# PbServerNode: 1 node_id, 2 host, 3 port (4 listeners and 5 rack left out)
def server_node(node_id, host, port):
    return f_varint(1, node_id) + f_bytes(2, host) + f_varint(3, port)


# PbApiVersion: 1 api_key, 2 min_version, 3 max_version (all 0 here)
def api_version(key):
    return f_varint(1, key) + f_varint(2, 0) + f_varint(3, 0)


def elsewhere(name, key):
    return ("The server does not support %s(%d) version 0: this key is served by the coordinator, "
            "not by a tablet server; send it to the coordinator named in GET_METADATA." % (name, key))


EXPIRATION = 1735538268000 + 24 * 3600 * 1000  # the tests' clock + 24h

frames = {
    # docs/protocol.md §1: Java's first request.
    "api_versions_request": request(1000, 0, 0, f_bytes(1, "fluss") + f_bytes(2, "0.1.0")),
    # docs/protocol.md §1: ERROR for request 7, code 63, no message.
    "error_63_bare": error(7, 63),
    # What the sidecar answers request 7 for producer id "a b".
    "error_63_response": error(7, 63, "Invalid producer ID 'a b': 'a b' contains one or more characters other than ASCII alphanumerics, '_' and '-'"),
    "error_minus1_bare": error(3, -1),
    "server_failure_minus1": server_failure(-1, "frame length 2147483647 exceeds the limit"),
    # REGISTER job-1: table 100 bucket 0 = 42, table 200 partition 5 bucket 1 = 7.
    "register_request": request(1053, 0, 1, f_bytes(1, "job-1")
                                + f_bytes(2, table(100, [bucket(0, 42)]))
                                + f_bytes(2, table(200, [bucket(1, 7, partition=5)]))),
    "register_response_created": success(1, f_varint(1, 0)),
    "register_response_already_exists": success(1, f_varint(1, 1)),
    "get_request": request(1054, 0, 2, f_bytes(1, "job-1")),
    "get_response_found": success(2, f_bytes(1, "job-1") + f_varint(2, EXPIRATION)
                                  + f_bytes(3, table(100, [bucket(0, 42)]))
                                  + f_bytes(3, table(200, [bucket(1, 7, partition=5)]))),
    "get_response_not_found": success(2, b""),
    "delete_request": request(1055, 0, 3, f_bytes(1, "job-1")),
    "delete_response": success(3, b""),
    "metadata_request_empty": request(1012, 0, 4, b""),
    # Producer id "a", 0xFF, "b": the invalid byte is echoed as U+FFFD
    # (EF BF BD), as a Fluss client's string decoder shows it.
    "error_63_invalid_utf8": error(8, 63, "Invalid producer ID 'a\ufffdb': 'a\ufffdb' contains one or more characters "
                                   "other than ASCII alphanumerics, '_' and '-'"),
    # Producer id of 300 'x': echoed as its first 256 characters and its
    # full length.
    "error_63_long_id": error(9, 63, "Invalid producer ID '" + "x" * 256 + "... (300 bytes in all)': the length of '"
                              + "x" * 256 + "... (300 bytes in all)' is longer than the max allowed length 200"),
    # REGISTER whose second bucket of the first table has no bucket_id.
    "error_decode_missing_bucket_id": error(10, 3, "Failed to decode RegisterProducerOffsetsRequest of "
                                            "REGISTER_PRODUCER_OFFSETS(1053) version 0: required field "
                                            "table_offsets[0].bucket_offsets[1].bucket_id is missing"),
    # GET_METADATA answer for request 4 from node 0, whose coordinator
    # endpoint is advertised at 127.0.0.1:9123 and its tablet endpoint at
    # 127.0.0.1:9124: PbServerNode carries node_id, host and port only (no
    # listeners, field 4), as a coordinator's answer to clients. Both
    # endpoints answer it alike.
    "metadata_response": success(4, f_bytes(1, server_node(0, "127.0.0.1", 9123))
                                 + f_bytes(2, server_node(0, "127.0.0.1", 9124))),
    # API_VERSIONS answer to Java's first request on the coordinator
    # endpoint: the keys it serves, then server_type (field 2) = 1,
    # COORDINATOR.
    "api_versions_response": success(0, b"".join(f_bytes(1, api_version(k)) for k in (1000, 1012, 1038, 1053, 1054, 1055, 1062))
                                     + f_varint(2, 1)),
    # The same on the tablet endpoint: no producer offsets keys (a Fluss
    # tablet server answers GET_CLUSTER_HEALTH too), and server_type = 2,
    # TABLET_SERVER.
    "tablet_api_versions_response": success(0, b"".join(f_bytes(1, api_version(k)) for k in (1000, 1012, 1038, 1062))
                                            + f_varint(2, 2)),
    # The producer offsets keys sent to the tablet endpoint (the requests
    # above, ids 1 to 3): UNSUPPORTED_VERSION (2) naming the key and its
    # server.
    "tablet_register_elsewhere": error(1, 2, elsewhere("REGISTER_PRODUCER_OFFSETS", 1053)),
    "tablet_get_elsewhere": error(2, 2, elsewhere("GET_PRODUCER_OFFSETS", 1054)),
    "tablet_delete_elsewhere": error(3, 2, elsewhere("DELETE_PRODUCER_OFFSETS", 1055)),
    # GET_CLUSTER_HEALTH (1062), request 11: an empty body. The answer sets
    # all five required fields, the four replica counts 0 (a varint 0 is
    # one byte), then status: 0 GREEN, 2 RED, 3 UNKNOWN.
    "cluster_health_request": request(1062, 0, 11, b""),
    "cluster_health_response_green": success(11, f_varint(1, 0) + f_varint(2, 0) + f_varint(3, 0) + f_varint(4, 0) + f_varint(5, 0)),
    "cluster_health_response_red": success(11, f_varint(1, 0) + f_varint(2, 0) + f_varint(3, 0) + f_varint(4, 0) + f_varint(5, 2)),
    "cluster_health_response_unknown": success(11, f_varint(1, 0) + f_varint(2, 0) + f_varint(3, 0) + f_varint(4, 0) + f_varint(5, 3)),
}

if __name__ == "__main__":
    for name, data in frames.items():
        with open(name + ".hex", "w") as f:
            f.write(data.hex(" ") + "\n")
