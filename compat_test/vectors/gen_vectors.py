#!/usr/bin/env python3
"""Writes the golden vectors of compat_test from the field tables of
docs/protocol.md (§1 framing, §6 messages) and docs/storage-format.md (§1.2, §5,
§6), by hand: every tag, varint and length is spelled out here, with a
line of explanation per piece, independently of any protobuf library and of
the sidecar's Go encoder (which the Go tests check against these files).

Run it from anywhere to regenerate frames/*.json, storage.json and
fspath.json; the tests never run it. It needs only the Python standard
library.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# The reference sidecar setup that makes every reply deterministic (the Go
# test in compat_test starts the sidecar like this):
REF_NOW_MS = 1735538268000  # the sidecar's clock, fixed
REF_TTL_MS = 24 * 3600 * 1000  # coordinator.producer-offsets.ttl default, 24 h
REF_EXPIRATION = REF_NOW_MS + REF_TTL_MS  # 1735624668000
REF_HOST, REF_PORT = "127.0.0.1", 9123  # advertised.listeners FLUSS://127.0.0.1:9123
REF_TABLET_PORT = 9124  # sidecar.tablet-server.advertised.listeners FLUSS://127.0.0.1:9124
REF_NODE_ID = 0  # sidecar.node-id default


# ---------------------------------------------------------------- encoding
# A piece is (bytes, explanation, depth). Messages are lists of pieces.


def varint(n):
    """Base-128 varint; a negative int32/int64 is its 64-bit two's
    complement, so always 10 bytes (docs/protocol.md §6, Java codec)."""
    if n < 0:
        n += 1 << 64
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


def f_varint(field, name, n, depth=0):
    return [(tag(field, 0) + varint(n), "field %d %s (varint) = %d" % (field, name, n), depth)]


def f_bytes(field, name, value, depth=0):
    b = value.encode() if isinstance(value, str) else value
    shown = repr(value) if isinstance(value, str) else "bytes " + (b.hex(" ") or "(empty)")
    return [(tag(field, 2) + varint(len(b)) + b, "field %d %s (len %d) = %s" % (field, name, len(b), shown), depth)]


def f_msg(field, name, pieces, depth=0):
    body = b"".join(p[0] for p in pieces)
    head = [(tag(field, 2) + varint(len(body)), "field %d %s (message, len %d):" % (field, name, len(body)), depth)]
    return head + [(p[0], p[1], p[2] + depth + 1) for p in pieces]


def be(n, size):
    return n.to_bytes(size, "big", signed=True)


def frame(header, body):
    payload = b"".join(p[0] for p in header + body)
    return [(be(len(payload), 4), "length = %d (bytes after this field)" % len(payload), 0)] + header + body


def request(api_key, request_id, body, version=0):
    return frame([(be(api_key, 2), "api_key = %d" % api_key, 0),
                  (be(version, 2), "api_version = %d" % version, 0),
                  (be(request_id, 4), "request_id = %d" % request_id, 0)], body)


def success(request_id, body):
    return frame([(be(0, 1), "type = 0 SUCCESS_RESPONSE", 0),
                  (be(request_id, 4), "request_id = %d" % request_id, 0)], body)


def error_body(code, message):
    body = f_varint(1, "error_code", code)
    if message is not None:
        body += f_bytes(2, "error_message", message)
    return body


def error(request_id, code, message=None):
    return frame([(be(1, 1), "type = 1 ERROR_RESPONSE", 0),
                  (be(request_id, 4), "request_id = %d" % request_id, 0)], error_body(code, message))


def server_failure(code, message=None):
    return frame([(be(2, 1), "type = 2 SERVER_FAILURE (no request_id)", 0)], error_body(code, message))


# ---------------------------------------------------------------- messages


def api_version(key):  # PbApiVersion: 1 api_key, 2 min_version, 3 max_version
    return f_varint(1, "api_key", key) + f_varint(2, "min_version", 0) + f_varint(3, "max_version", 0)


def server_node(port=REF_PORT):  # PbServerNode: 1 node_id, 2 host, 3 port (4 listeners is not sent to clients)
    return (f_varint(1, "node_id", REF_NODE_ID) + f_bytes(2, "host", REF_HOST)
            + f_varint(3, "port", port))


def bucket(bucket_id, offset, partition=None):
    """PbBucketOffset: 1 partition_id (only if partitioned), 2 bucket_id,
    4 log_end_offset (there is no field 3)."""
    p = []
    if partition is not None:
        p += f_varint(1, "partition_id", partition)
    return p + f_varint(2, "bucket_id", bucket_id) + f_varint(4, "log_end_offset", offset)


def table(table_id, buckets):  # PbProducerTableOffsets: 1 table_id, 2 bucket_offsets
    p = f_varint(1, "table_id", table_id)
    for b in buckets:
        p += f_msg(2, "bucket_offsets", b)
    return p


def producer_id(pid):
    return f_bytes(1, "producer_id", pid)


# JSON forms of the same messages ("decoded"): protobuf JSON with the .proto
# field names; int64 values as JSON numbers, bytes as base64.
def j_bucket(bucket_id, offset, partition=None):
    d = {}
    if partition is not None:
        d["partition_id"] = partition
    d["bucket_id"] = bucket_id
    d["log_end_offset"] = offset
    return d


def j_node(port=REF_PORT):
    return {"node_id": REF_NODE_ID, "host": REF_HOST, "port": port}


SERVED = [(1000, "API_VERSIONS"), (1012, "GET_METADATA"), (1038, "AUTHENTICATE"),
          (1053, "REGISTER_PRODUCER_OFFSETS"), (1054, "GET_PRODUCER_OFFSETS"),
          (1055, "DELETE_PRODUCER_OFFSETS"), (1062, "GET_CLUSTER_HEALTH")]
# The tablet-server endpoint: no producer offsets keys; GET_CLUSTER_HEALTH,
# which a Fluss tablet server answers too.
TABLET_SERVED = SERVED[:3] + SERVED[6:]

SERVER_TYPE_COORDINATOR, SERVER_TYPE_TABLET_SERVER = 1, 2
MSG_2_ELSEWHERE = ("The server does not support REGISTER_PRODUCER_OFFSETS(1053) version 0: this key is served by "
                   "the coordinator, not by a tablet server; send it to the coordinator named in GET_METADATA.")

NONPART = [bucket(0, 42), bucket(1, 7)]  # table 100: bucket 0 at 42, bucket 1 at 7
J_NONPART = [{"table_id": 100, "bucket_offsets": [j_bucket(0, 42), j_bucket(1, 7)]}]
PART = [bucket(0, 9, partition=5), bucket(1, 11, partition=6)]  # table 200, two partitions
J_PART = [{"table_id": 200, "bucket_offsets": [j_bucket(0, 9, 5), j_bucket(1, 11, 6)]}]

MSG_63_SPACE = ("Invalid producer ID 'a b': 'a b' contains one or more characters other than "
                "ASCII alphanumerics, '_' and '-'")
MSG_63_DOT = "Invalid producer ID '.': '.' is not allowed"
MSG_46 = "Authenticate protocol not match: protocol of server is 'PLAINTEXT' while protocol of client is 'PLAIN'"
MSG_48 = ("Principal FlussPrincipal{name='guest', type='User'} have no authorization to operate WRITE "
          "on resource Resource{type=TABLE, name='test_db_1.test_pk_table_1'} ")

V = []  # the vectors, in scenario order


def vec(name, pieces, *, meaning, api_key=None, message=None, decoded=None, exact="always",
        source="sidecar", scenario=None, check=None):
    """exact: "always" = the sidecar must send exactly these bytes;
    "reference" = exactly only when started in the reference setup above
    (else clients compare decoded fields, skipping expiration_time / the
    advertised address); "code" = type, request id and error_code only."""
    V.append(dict(name=name, meaning=meaning, source=source, api_key=api_key, message=message,
                  decoded=decoded, exact=exact, scenario=scenario, check=check, pieces=pieces))


# ---- the scenario, connection "main": one request id counter from 0.

vec("api_versions_request", request(1000, 0, f_bytes(1, "client_software_name", "fluss")
                                    + f_bytes(2, "client_software_version", "0.1.0")),
    meaning="The Java client's first request on every connection: API_VERSIONS v0, request id 0, "
            "client_software_name \"fluss\", client_software_version \"0.1.0\".",
    api_key=1000, message="ApiVersionsRequest", source="docs/protocol.md §1 example",
    decoded={"client_software_name": "fluss", "client_software_version": "0.1.0"}, scenario="main")

vec("api_versions_response", success(0, sum((f_msg(1, "api_versions", api_version(k)) for k, _ in SERVED), [])
                                    + f_varint(2, "server_type", SERVER_TYPE_COORDINATOR)),
    meaning="The coordinator endpoint's answer: every served key (1000, 1012, 1038, 1053, 1054, 1055, 1062) with "
            "versions [0,0], and server_type 1 (COORDINATOR), as every Fluss coordinator sends it: a Java client "
            "checks it against the node it meant to reach, fluss-go refuses an answer without it.",
    api_key=1000, message="ApiVersionsResponse",
    decoded={"api_versions": [{"api_key": k, "min_version": 0, "max_version": 0} for k, _ in SERVED],
             "server_type": SERVER_TYPE_COORDINATOR},
    scenario="main")

vec("metadata_request_empty", request(1012, 1, []),
    meaning="GET_METADATA with an empty body, as the Java client bootstraps (docs/protocol.md §7).",
    api_key=1012, message="MetadataRequest", decoded={}, source="docs/protocol.md §7", scenario="main")

vec("metadata_response", success(1, f_msg(1, "coordinator_server", server_node())
                                 + f_msg(2, "tablet_servers", server_node(REF_TABLET_PORT))),
    meaning="The sidecar names its coordinator endpoint as coordinator and its tablet-server endpoint as the one "
            "tablet server (node 0 at their advertised addresses, 9123 and 9124); no table or partition metadata, "
            "and no listeners field, as a coordinator answers clients. The tablet endpoint answers the same.",
    api_key=1012, message="MetadataResponse", exact="reference",
    decoded={"coordinator_server": j_node(), "tablet_servers": [j_node(REF_TABLET_PORT)]}, scenario="main")

REG_NONPART = producer_id("job-1") + f_msg(2, "table_offsets", table(100, NONPART))
vec("register_request_nonpartitioned", request(1053, 2, REG_NONPART),
    meaning="REGISTER job-1: non-partitioned table 100, bucket 0 at offset 42, bucket 1 at offset 7; no ttl_ms.",
    api_key=1053, message="RegisterProducerOffsetsRequest",
    decoded={"producer_id": "job-1", "table_offsets": J_NONPART}, scenario="main")

vec("register_response_created", success(2, f_varint(1, "result", 0)),
    meaning="result 0 = CREATED; the sidecar always sets result.",
    api_key=1053, message="RegisterProducerOffsetsResponse", decoded={"result": 0}, scenario="main")

vec("register_request_again", request(1053, 3, REG_NONPART),
    meaning="The same REGISTER again (request id 3) while the snapshot is live.",
    api_key=1053, message="RegisterProducerOffsetsRequest",
    decoded={"producer_id": "job-1", "table_offsets": J_NONPART}, scenario="main")

vec("register_response_already_exists", success(3, f_varint(1, "result", 1)),
    meaning="result 1 = ALREADY_EXISTS; the stored snapshot is kept.",
    api_key=1053, message="RegisterProducerOffsetsResponse", decoded={"result": 1}, scenario="main")

vec("get_request", request(1054, 4, producer_id("job-1")),
    meaning="GET job-1.", api_key=1054, message="GetProducerOffsetsRequest",
    decoded={"producer_id": "job-1"}, scenario="main")

vec("get_response_nonpartitioned", success(4, producer_id("job-1")
                                          + f_varint(2, "expiration_time", REF_EXPIRATION)
                                          + f_msg(3, "table_offsets", table(100, NONPART))),
    meaning="Found: producer_id, expiration_time (reference clock + 24 h, epoch ms) and table 100's buckets "
            "with log_end_offset always set (field 4).",
    api_key=1054, message="GetProducerOffsetsResponse", exact="reference",
    decoded={"producer_id": "job-1", "expiration_time": REF_EXPIRATION, "table_offsets": J_NONPART},
    scenario="main")

vec("get_request_missing", request(1054, 5, producer_id("job-missing")),
    meaning="GET of an id that has no snapshot.", api_key=1054, message="GetProducerOffsetsRequest",
    decoded={"producer_id": "job-missing"}, scenario="main")

vec("get_response_not_found", success(5, []),
    meaning="Not found is an EMPTY SUCCESS body (no producer_id): Java returns null, Rust producer_id None.",
    api_key=1054, message="GetProducerOffsetsResponse", decoded={}, scenario="main",
    source="docs/protocol.md §7, §9")

vec("delete_request", request(1055, 6, producer_id("job-1")),
    meaning="DELETE job-1.", api_key=1055, message="DeleteProducerOffsetsRequest",
    decoded={"producer_id": "job-1"}, scenario="main")

vec("delete_response", success(6, []),
    meaning="DeleteProducerOffsetsResponse has no fields: an empty SUCCESS body.",
    api_key=1055, message="DeleteProducerOffsetsResponse", decoded={}, scenario="main")

vec("get_request_invalid_id", request(1054, 7, producer_id("a b")),
    meaning="GET with producer id \"a b\" (a space is not allowed).", api_key=1054,
    message="GetProducerOffsetsRequest", decoded={"producer_id": "a b"}, scenario="main")

vec("error_63_invalid_producer_id", error(7, 63, MSG_63_SPACE),
    meaning="ERROR 63 INVALID_PRODUCER_ID_EXCEPTION with the coordinator's exact message (docs/storage-format.md §7.4).",
    api_key=1054, message="ErrorResponse", decoded={"error_code": 63, "error_message": MSG_63_SPACE},
    scenario="main")

# Pipelined: requests 8..12 are all sent before any reply is read; the
# replies may come in any order and are matched by request id.
REG_PART = producer_id("job-2") + f_msg(2, "table_offsets", table(200, PART))
vec("register_request_partitioned", request(1053, 8, REG_PART),
    meaning="REGISTER job-2: partitioned table 200, partition 5 bucket 0 at 9, partition 6 bucket 1 at 11.",
    api_key=1053, message="RegisterProducerOffsetsRequest",
    decoded={"producer_id": "job-2", "table_offsets": J_PART}, scenario="pipelined")
vec("register_response_created_8", success(8, f_varint(1, "result", 0)),
    meaning="CREATED for request 8.", api_key=1053, message="RegisterProducerOffsetsResponse",
    decoded={"result": 0}, scenario="pipelined")

vec("register_request_empty", request(1053, 9, producer_id("job-3")),
    meaning="REGISTER job-3 with no tables at all (accepted, like Fluss).", api_key=1053,
    message="RegisterProducerOffsetsRequest", decoded={"producer_id": "job-3"}, scenario="pipelined")
vec("register_response_created_9", success(9, f_varint(1, "result", 0)),
    meaning="CREATED for request 9.", api_key=1053, message="RegisterProducerOffsetsResponse",
    decoded={"result": 0}, scenario="pipelined")

vec("delete_request_missing", request(1055, 10, producer_id("job-missing")),
    meaning="DELETE of an id with no snapshot: succeeds.", api_key=1055,
    message="DeleteProducerOffsetsRequest", decoded={"producer_id": "job-missing"}, scenario="pipelined")
vec("delete_response_10", success(10, []),
    meaning="Empty SUCCESS for request 10.", api_key=1055, message="DeleteProducerOffsetsResponse",
    decoded={}, scenario="pipelined")

vec("register_request_invalid_dot", request(1053, 11, producer_id(".")),
    meaning="REGISTER with producer id \".\".", api_key=1053, message="RegisterProducerOffsetsRequest",
    decoded={"producer_id": "."}, scenario="pipelined")
vec("error_63_dot", error(11, 63, MSG_63_DOT),
    meaning="ERROR 63 with the reason for \".\".", api_key=1053, message="ErrorResponse",
    decoded={"error_code": 63, "error_message": MSG_63_DOT}, scenario="pipelined")

vec("create_database_request", request(1001, 12, []),
    meaning="CREATE_DATABASE (1001), a key the sidecar does not serve, with an empty body.",
    api_key=1001, message=None, decoded=None, scenario="pipelined")
vec("error_2_not_served", error(12, 2, "The server does not support api key 1001 version 0; the key is not served."),
    meaning="ERROR 2 UNSUPPORTED_VERSION: the sidecar always answers (Fluss would drop the request and the "
            "Java client would hang). Clients compare type, request id and code; the text is the sidecar's.",
    api_key=1001, message="ErrorResponse", exact="code",
    decoded={"error_code": 2, "error_message": "The server does not support api key 1001 version 0; the key is not served."},
    scenario="pipelined")

# Back to one at a time.
vec("get_request_partitioned", request(1054, 13, producer_id("job-2")),
    meaning="GET job-2.", api_key=1054, message="GetProducerOffsetsRequest",
    decoded={"producer_id": "job-2"}, scenario="main")
vec("get_response_partitioned", success(13, producer_id("job-2")
                                       + f_varint(2, "expiration_time", REF_EXPIRATION)
                                       + f_msg(3, "table_offsets", table(200, PART))),
    meaning="Found, partitioned: each bucket carries partition_id (field 1).", api_key=1054,
    message="GetProducerOffsetsResponse", exact="reference",
    decoded={"producer_id": "job-2", "expiration_time": REF_EXPIRATION, "table_offsets": J_PART},
    scenario="main")

vec("get_request_empty", request(1054, 14, producer_id("job-3")),
    meaning="GET job-3.", api_key=1054, message="GetProducerOffsetsRequest",
    decoded={"producer_id": "job-3"}, scenario="main")
vec("get_response_empty", success(14, producer_id("job-3") + f_varint(2, "expiration_time", REF_EXPIRATION)),
    meaning="Found with no tables: producer_id and expiration_time, no table_offsets (not the same as not found).",
    api_key=1054, message="GetProducerOffsetsResponse", exact="reference",
    decoded={"producer_id": "job-3", "expiration_time": REF_EXPIRATION}, scenario="main")

vec("register_request_malformed", request(1053, 15, [(bytes([0x0A, 0x7F]), "field 1 producer_id claims 127 bytes; none follow (malformed)", 0)]),
    meaning="REGISTER whose body is not valid protobuf.", api_key=1053, message=None, decoded=None,
    scenario="main")
vec("error_3_malformed", error(15, 3, "Failed to decode RegisterProducerOffsetsRequest"),
    meaning="ERROR 3 CORRUPT_MESSAGE: a bad body gets an answer and the connection stays open (Fluss sends "
            "none). Clients compare type, request id and code; the message text is the sidecar's.",
    api_key=1053, message="ErrorResponse", exact="code",
    decoded={"error_code": 3, "error_message": "Failed to decode RegisterProducerOffsetsRequest"},
    scenario="main")

vec("delete_request_partitioned", request(1055, 16, producer_id("job-2")),
    meaning="DELETE job-2.", api_key=1055, message="DeleteProducerOffsetsRequest",
    decoded={"producer_id": "job-2"}, scenario="main")
vec("delete_response_16", success(16, []), meaning="Empty SUCCESS for request 16.", api_key=1055,
    message="DeleteProducerOffsetsResponse", decoded={}, scenario="main")
vec("delete_request_empty", request(1055, 17, producer_id("job-3")),
    meaning="DELETE job-3.", api_key=1055, message="DeleteProducerOffsetsRequest",
    decoded={"producer_id": "job-3"}, scenario="main")
vec("delete_response_17", success(17, []), meaning="Empty SUCCESS for request 17.", api_key=1055,
    message="DeleteProducerOffsetsResponse", decoded={}, scenario="main")

# ---- connection "auth": AUTHENTICATE on a PLAINTEXT listener.
vec("authenticate_request_plain", request(1038, 1, f_bytes(1, "protocol", "PLAIN")
                                          + f_bytes(2, "token", b"\x00user\x00pass")),
    meaning="AUTHENTICATE with SASL/PLAIN: protocol \"PLAIN\", token \"\\0user\\0pass\" (authzid empty).",
    api_key=1038, message="AuthenticateRequest", source="docs/protocol.md §2",
    decoded={"protocol": "PLAIN", "token": "AHVzZXIAcGFzcw=="}, scenario="auth")
vec("error_46_plaintext", error(1, 46, MSG_46),
    meaning="A PLAINTEXT listener answers a PLAIN AUTHENTICATE with ERROR 46 and the coordinator's message "
            "(docs/protocol.md §3); the connection stays open.",
    api_key=1038, message="ErrorResponse", source="docs/protocol.md §3",
    decoded={"error_code": 46, "error_message": MSG_46}, scenario="auth")
vec("authenticate_request_plaintext", request(1038, 2, f_bytes(1, "protocol", "PLAINTEXT")
                                              + f_bytes(2, "token", b"")),
    meaning="AUTHENTICATE with the listener's own protocol PLAINTEXT and an empty token.",
    api_key=1038, message="AuthenticateRequest", decoded={"protocol": "PLAINTEXT", "token": ""}, scenario="auth")
vec("authenticate_response_plaintext", success(2, []),
    meaning="A matching protocol gets an empty AuthenticateResponse (docs/protocol.md §3).", api_key=1038,
    message="AuthenticateResponse", decoded={}, scenario="auth")

# ---- connection "failure": a frame with a negative length.
vec("negative_length_frame", [(be(-1, 4), "length = -1 (invalid)", 0)],
    meaning="Four bytes FF FF FF FF: a negative frame length.", scenario="failure")
vec("server_failure_negative_length", server_failure(-1, "invalid frame: negative length -1"),
    meaning="SERVER_FAILURE (type 2, no request id) with code -1, then the sidecar closes the connection "
            "(docs/protocol.md §1). Clients compare type and code; the text is the sidecar's.",
    message="ErrorResponse", exact="code",
    decoded={"error_code": -1, "error_message": "invalid frame: negative length -1"}, scenario="failure")

# ---- encoder-only vectors (checked by the Go tests, not sent by the clients).
vec("authenticate_response_plain", success(1, f_bytes(1, "challenge", b"")),
    meaning="A SASL server's PLAIN success: challenge = empty bytes, 0A 00 (docs/protocol.md §3). The Rust client "
            "answers even this empty challenge with a second AUTHENTICATE.",
    api_key=1038, message="AuthenticateResponse", source="docs/protocol.md §3", decoded={"challenge": ""})
vec("error_63_bare", error(7, 63),
    meaning="ERROR for request 7, code 63, no message (the client shows the default message).",
    message="ErrorResponse", source="docs/protocol.md §1 example", decoded={"error_code": 63})
vec("error_minus1_bare", error(3, -1),
    meaning="ERROR code -1 UNKNOWN_SERVER_ERROR: a negative int32 is a 10-byte varint.",
    message="ErrorResponse", source="docs/protocol.md §1 example", decoded={"error_code": -1})
vec("error_2_bare", error(4, 2), meaning="ERROR code 2 UNSUPPORTED_VERSION, default message.",
    message="ErrorResponse", decoded={"error_code": 2})
vec("error_3_bare", error(5, 3), meaning="ERROR code 3 CORRUPT_MESSAGE, default message.",
    message="ErrorResponse", decoded={"error_code": 3})
vec("error_48_authorization", error(6, 48, MSG_48),
    meaning="ERROR 48 AUTHORIZATION_EXCEPTION with Fluss's message (note the trailing space).",
    message="ErrorResponse", source="docs/storage-format.md §3.2", decoded={"error_code": 48, "error_message": MSG_48})
vec("server_failure_bare", server_failure(-1),
    meaning="SERVER_FAILURE with code -1 and no message: type byte 2, then the ErrorResponse, no request id.",
    message="ErrorResponse", source="docs/protocol.md §1", decoded={"error_code": -1})


# ---- the scenario, connection "tablet": to the tablet server GET_METADATA
# names, request ids from 0 again (api_versions_request, metadata_request_empty
# and register_request_nonpartitioned are sent as they are on "main").

vec("tablet_api_versions_response", success(0, sum((f_msg(1, "api_versions", api_version(k)) for k, _ in TABLET_SERVED), [])
                                           + f_varint(2, "server_type", SERVER_TYPE_TABLET_SERVER)),
    meaning="The tablet-server endpoint's answer: what a tablet server serves of the sidecar's keys (1000, 1012, "
            "1038, 1062) and server_type 2 (TABLET_SERVER), the type of the node GET_METADATA names at its address.",
    api_key=1000, message="ApiVersionsResponse",
    decoded={"api_versions": [{"api_key": k, "min_version": 0, "max_version": 0} for k, _ in TABLET_SERVED],
             "server_type": SERVER_TYPE_TABLET_SERVER},
    scenario="tablet")
vec("tablet_error_2_elsewhere", error(2, 2, MSG_2_ELSEWHERE),
    meaning="REGISTER sent to the tablet-server endpoint (request 2 of its connection): ERROR 2 "
            "UNSUPPORTED_VERSION naming the key and the coordinator, never silence; nothing is stored.",
    api_key=1053, message="ErrorResponse",
    decoded={"error_code": 2, "error_message": MSG_2_ELSEWHERE}, scenario="tablet")


# ---- the scenario "sasl", against a listener with SASL/PLAIN user "user",
# password "pass": on the coordinator and on the tablet server alike,
# API_VERSIONS (request 0), AUTHENTICATE PLAIN (request 1, the vectors
# above), then GET_METADATA as request 2.

vec("metadata_request_after_login", request(1012, 2, []),
    meaning="GET_METADATA with an empty body, after API_VERSIONS and a SASL/PLAIN login (request 2).",
    api_key=1012, message="MetadataRequest", decoded={}, scenario="sasl")
vec("metadata_response_after_login", success(2, f_msg(1, "coordinator_server", server_node())
                                             + f_msg(2, "tablet_servers", server_node(REF_TABLET_PORT))),
    meaning="The same metadata as metadata_response, for request 2: SASL applies to both endpoints, and "
            "after the login each names the coordinator endpoint and the tablet-server endpoint.",
    api_key=1012, message="MetadataResponse", exact="reference",
    decoded={"coordinator_server": j_node(), "tablet_servers": [j_node(REF_TABLET_PORT)]}, scenario="sasl")


def header_fields(pieces, kind):
    raw = b"".join(p[0] for p in pieces)
    if kind == "request":
        return {"api_version": int.from_bytes(raw[6:8], "big", signed=True),
                "request_id": int.from_bytes(raw[8:12], "big", signed=True)}, raw[12:]
    if kind == "server_failure":
        return {}, raw[5:]
    return {"request_id": int.from_bytes(raw[5:9], "big", signed=True)}, raw[9:]


def write_frames():
    out = os.path.join(HERE, "frames")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".json"):
            os.remove(os.path.join(out, f))
    for v in V:
        pieces = v.pop("pieces")
        raw = b"".join(p[0] for p in pieces)
        if len(raw) == 4:
            kind = "invalid"
        elif "length" in pieces[0][1] and pieces[1][1].startswith("api_key"):
            kind = "request"
        else:
            kind = {0: "success", 1: "error", 2: "server_failure"}[raw[4]]
        doc = {"name": v["name"], "meaning": v["meaning"], "source": v["source"],
               "direction": "client_to_server" if kind in ("request", "invalid") else "server_to_client",
               "frame": kind}
        if v["api_key"] is not None:
            doc["api_key"] = v["api_key"]
        if kind in ("request", "success", "error", "server_failure"):
            hdr, body = header_fields(pieces, kind)
            doc.update(hdr)
            doc["body_hex"] = body.hex(" ")
        if v["message"]:
            doc["message"] = v["message"]
        if v["decoded"] is not None:
            doc["decoded"] = v["decoded"]
        if doc["direction"] == "server_to_client":
            doc["exact"] = v["exact"]
        doc["scenario"] = v["scenario"] or "none"
        doc["hex"] = raw.hex(" ")
        doc["layout"] = [{"hex": b.hex(" "), "field": "  " * d + text} for b, text, d in pieces]
        layout = doc.pop("layout")
        text = json.dumps(doc, indent=1, ensure_ascii=False)
        rows = ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in layout)
        text = text[:-2] + ',\n "layout": [\n' + rows + "\n ]\n}\n"
        with open(os.path.join(out, v["name"] + ".json"), "w") as f:
            f.write(text)


# ---------------------------------------------------------------- storage
# docs/storage-format.md §1.2 (producer znode) and §6 (offsets file): the exact bytes
# from the spec, with what they mean as data.

STORAGE = [
    {"name": "znode_empty", "kind": "producer_znode", "source": "docs/storage-format.md §1.2",
     "json": '{"version":1,"expiration_time":1735538268000,"tables":[]}',
     "snapshot": {"expiration_time": 1735538268000, "tables": []}},
    {"name": "znode_two_tables", "kind": "producer_znode", "source": "docs/storage-format.md §1.2",
     "json": '{"version":1,"expiration_time":1735538268000,"tables":[{"table_id":100,"offsets_path":"oss://bucket/path/uuid1.offsets"},{"table_id":200,"offsets_path":"s3://bucket/path/uuid2.offsets"}]}',
     "snapshot": {"expiration_time": 1735538268000, "tables": [
         {"table_id": 100, "offsets_path": "oss://bucket/path/uuid1.offsets"},
         {"table_id": 200, "offsets_path": "s3://bucket/path/uuid2.offsets"}]}},
    {"name": "znode_hashmap_order", "kind": "producer_znode", "source": "docs/storage-format.md §1.2 (HashMap order)",
     "meaning": "tables given in the order 2,17,100,200,1 are written in Java HashMap<Long> order 17,1,2,100,200",
     "json": '{"version":1,"expiration_time":5,"tables":[{"table_id":17,"offsets_path":"/r/17"},{"table_id":1,"offsets_path":"/r/1"},{"table_id":2,"offsets_path":"/r/2"},{"table_id":100,"offsets_path":"/r/100"},{"table_id":200,"offsets_path":"/r/200"}]}',
     "snapshot": {"expiration_time": 5, "tables": [
         {"table_id": t, "offsets_path": "/r/%d" % t} for t in (2, 17, 100, 200, 1)]},
     "decoded_tables": [17, 1, 2, 100, 200]},
    {"name": "offsets_empty", "kind": "offsets_file", "source": "docs/storage-format.md §6",
     "json": '{"version":1,"table_id":1}', "table_id": 1, "buckets": []},
    {"name": "offsets_nonpartitioned", "kind": "offsets_file", "source": "docs/storage-format.md §6",
     "json": '{"version":1,"table_id":4,"bucket_offsets":[100,200,300]}', "table_id": 4,
     "buckets": [{"bucket_id": 0, "log_end_offset": 100}, {"bucket_id": 1, "log_end_offset": 200},
                 {"bucket_id": 2, "log_end_offset": 300}]},
    {"name": "offsets_nonpartitioned_holes", "kind": "offsets_file", "source": "docs/storage-format.md §6",
     "meaning": "buckets 1 and 3 are missing: written as -1, dropped on read",
     "json": '{"version":1,"table_id":5,"bucket_offsets":[100,-1,300,-1,500]}', "table_id": 5,
     "buckets": [{"bucket_id": 0, "log_end_offset": 100}, {"bucket_id": 2, "log_end_offset": 300},
                 {"bucket_id": 4, "log_end_offset": 500}]},
    {"name": "offsets_partitioned", "kind": "offsets_file", "source": "docs/storage-format.md §6",
     "json": '{"version":1,"table_id":6,"partition_offsets":[{"partition_id":1,"bucket_offsets":[100,200]},{"partition_id":2,"bucket_offsets":[300,400]}]}',
     "table_id": 6,
     "buckets": [{"partition_id": 1, "bucket_id": 0, "log_end_offset": 100},
                 {"partition_id": 1, "bucket_id": 1, "log_end_offset": 200},
                 {"partition_id": 2, "bucket_id": 0, "log_end_offset": 300},
                 {"partition_id": 2, "bucket_id": 1, "log_end_offset": 400}]},
    {"name": "offsets_partitioned_holes", "kind": "offsets_file", "source": "docs/storage-format.md §6",
     "json": '{"version":1,"table_id":7,"partition_offsets":[{"partition_id":1,"bucket_offsets":[100,-1,300]},{"partition_id":2,"bucket_offsets":[-1,400,-1,600]}]}',
     "table_id": 7,
     "buckets": [{"partition_id": 1, "bucket_id": 0, "log_end_offset": 100},
                 {"partition_id": 1, "bucket_id": 2, "log_end_offset": 300},
                 {"partition_id": 2, "bucket_id": 1, "log_end_offset": 400},
                 {"partition_id": 2, "bucket_id": 3, "log_end_offset": 600}]},
]

# docs/storage-format.md §5: FsPath(String).toString(), and the offsets file path of
# producer my-producer-1, table 12345, uuid U under a remote.data.dir.
U = "550e8400-e29b-41d4-a716-446655440000"
FSPATH = [
    {"input": "file:///tmp/fluss/remote", "string": "file:/tmp/fluss/remote",
     "offsets_path": "file:/tmp/fluss/remote/producers/my-producer-1/12345/%s.offsets" % U},
    {"input": "/tmp/fluss/remote", "string": "/tmp/fluss/remote",
     "offsets_path": "/tmp/fluss/remote/producers/my-producer-1/12345/%s.offsets" % U},
    {"input": "s3://bucket/fluss", "string": "s3://bucket/fluss",
     "offsets_path": "s3://bucket/fluss/producers/my-producer-1/12345/%s.offsets" % U},
    {"input": "oss://bucket/fluss", "string": "oss://bucket/fluss",
     "offsets_path": "oss://bucket/fluss/producers/my-producer-1/12345/%s.offsets" % U},
    {"input": "hdfs://nn:9000/fluss", "string": "hdfs://nn:9000/fluss",
     "offsets_path": "hdfs://nn:9000/fluss/producers/my-producer-1/12345/%s.offsets" % U},
    {"input": "/tmp//fluss///remote//", "string": "/tmp/fluss/remote"},
    {"input": "file://tmp/x", "string": "file://tmp/x", "authority": "tmp"},
    {"input": "hdfs:///fluss", "string": "hdfs:/fluss"},
    {"input": "s3://bucket", "producers_dir": "s3://bucket/producers"},
    {"input": "s3://bucket/", "producers_dir": "s3://bucket/producers"},
    {"input": "C:\\fluss\\remote", "string": "C:/fluss/remote"},
    {"input": "file:/tmp/fluss/remote/producers/my-producer-1/12345/%s.offsets" % U,
     "string": "file:/tmp/fluss/remote/producers/my-producer-1/12345/%s.offsets" % U,
     "meaning": "re-parsing a string Java wrote gives it back unchanged"},
    {"input": "", "error": "Can not create a Path from an empty string"},
]


def write_storage():
    with open(os.path.join(HERE, "storage.json"), "w") as f:
        json.dump(STORAGE, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(HERE, "fspath.json"), "w") as f:
        json.dump({"producer_id": "my-producer-1", "table_id": 12345, "uuid": U, "rows": FSPATH},
                  f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    write_frames()
    write_storage()
