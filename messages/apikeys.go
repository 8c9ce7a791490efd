package messages

import "fmt"

// Key is a Fluss api key: the int16 that starts every request header and
// says which API the body is for (docs/protocol.md §5). Ids below FirstKey are
// reserved for Kafka.
//
// This file is the one place in the module that states api key numbers;
// compat_test pins the table below to the spec.
type Key int16

// FirstKey is the lowest Fluss api key.
const FirstKey Key = 1000

// The keys the module serves, forwards or fakes by name. Every other key
// is still known to Name.
const (
	KeyAPIVersions             Key = 1000
	KeyCreateDatabase          Key = 1001
	KeyListDatabases           Key = 1003
	KeyDatabaseExists          Key = 1004
	KeyGetTableInfo            Key = 1007
	KeyGetMetadata             Key = 1012
	KeyAuthenticate            Key = 1038
	KeyRegisterProducerOffsets Key = 1053
	KeyGetProducerOffsets      Key = 1054
	KeyDeleteProducerOffsets   Key = 1055
	KeyGetClusterHealth        Key = 1062
)

// keyNames lists every Fluss api key with its name, in ascending order,
// as transcribed from docs/protocol.md §5.
var keyNames = []struct {
	key  Key
	name string
}{
	{1000, "API_VERSIONS"},
	{1001, "CREATE_DATABASE"},
	{1002, "DROP_DATABASE"},
	{1003, "LIST_DATABASES"},
	{1004, "DATABASE_EXISTS"},
	{1005, "CREATE_TABLE"},
	{1006, "DROP_TABLE"},
	{1007, "GET_TABLE_INFO"},
	{1008, "LIST_TABLES"},
	{1009, "LIST_PARTITION_INFOS"},
	{1010, "TABLE_EXISTS"},
	{1011, "GET_TABLE_SCHEMA"},
	{1012, "GET_METADATA"},
	{1013, "UPDATE_METADATA"},
	{1014, "PRODUCE_LOG"},
	{1015, "FETCH_LOG"},
	{1016, "PUT_KV"},
	{1017, "LOOKUP"},
	{1018, "NOTIFY_LEADER_AND_ISR"},
	{1019, "STOP_REPLICA"},
	{1020, "ADJUST_ISR"},
	{1021, "LIST_OFFSETS"},
	{1022, "COMMIT_KV_SNAPSHOT"},
	{1023, "GET_LATEST_KV_SNAPSHOTS"},
	{1024, "GET_KV_SNAPSHOT_METADATA"},
	{1025, "GET_FILESYSTEM_SECURITY_TOKEN"},
	{1026, "INIT_WRITER"},
	{1027, "COMMIT_REMOTE_LOG_MANIFEST"},
	{1028, "NOTIFY_REMOTE_LOG_OFFSETS"},
	{1029, "NOTIFY_KV_SNAPSHOT_OFFSET"},
	{1030, "COMMIT_LAKE_TABLE_SNAPSHOT"},
	{1031, "NOTIFY_LAKE_TABLE_OFFSET"},
	{1032, "GET_LAKE_SNAPSHOT"},
	{1033, "LIMIT_SCAN"},
	{1034, "PREFIX_LOOKUP"},
	{1035, "GET_DATABASE_INFO"},
	{1036, "CREATE_PARTITION"},
	{1037, "DROP_PARTITION"},
	{1038, "AUTHENTICATE"},
	{1039, "CREATE_ACLS"},
	{1040, "LIST_ACLS"},
	{1041, "DROP_ACLS"},
	{1042, "LAKE_TIERING_HEARTBEAT"},
	{1043, "CONTROLLED_SHUTDOWN"},
	{1044, "ALTER_TABLE"},
	{1045, "DESCRIBE_CLUSTER_CONFIGS"},
	{1046, "ALTER_CLUSTER_CONFIGS"},
	{1047, "ADD_SERVER_TAG"},
	{1048, "REMOVE_SERVER_TAG"},
	{1049, "REBALANCE"},
	{1050, "LIST_REBALANCE_PROGRESS"},
	{1051, "CANCEL_REBALANCE"},
	{1052, "PREPARE_LAKE_TABLE_SNAPSHOT"},
	{1053, "REGISTER_PRODUCER_OFFSETS"},
	{1054, "GET_PRODUCER_OFFSETS"},
	{1055, "DELETE_PRODUCER_OFFSETS"},
	{1056, "ACQUIRE_KV_SNAPSHOT_LEASE"},
	{1057, "RELEASE_KV_SNAPSHOT_LEASE"},
	{1058, "DROP_KV_SNAPSHOT_LEASE"},
	{1059, "GET_TABLE_STATS"},
	{1060, "ALTER_DATABASE"},
	{1061, "SCAN_KV"},
	{1062, "GET_CLUSTER_HEALTH"},
	{1063, "LIST_REMOTE_LOG_MANIFESTS"},
	{1064, "LIST_KV_SNAPSHOTS"},
}

// Name is the Fluss name of k (KeyAPIVersions → "API_VERSIONS"), or
// "UNKNOWN(<n>)" for a key Fluss does not define.
func (k Key) Name() string {
	for _, e := range keyNames {
		if e.key == k {
			return e.name
		}
	}
	return fmt.Sprintf("UNKNOWN(%d)", int16(k))
}

// Keys returns every key Fluss defines, in ascending order.
func Keys() []Key {
	out := make([]Key, len(keyNames))
	for i, e := range keyNames {
		out[i] = e.key
	}
	return out
}
