package remote

import (
	"slices"
	"strings"
	"testing"
)

// TestHDFSNameNodes resolves every authority form Fluss's HDFS file system
// takes, with the Hadoop keys an operator writes as fluss.hadoop.*.
func TestHDFSNameNodes(t *testing.T) {
	ha := map[string]string{
		"dfs.nameservices":                       "mycluster, other",
		"dfs.ha.namenodes.mycluster":             "nn1, nn2",
		"dfs.namenode.rpc-address.mycluster.nn1": "namenode1:9000",
		"dfs.namenode.rpc-address.mycluster.nn2": "namenode2:9000",
		"dfs.namenode.rpc-address.single":        "nn:8021",
		"dfs.ha.namenodes.broken":                "nn1",
	}
	cases := []struct {
		authority string
		conf      map[string]string
		want      []string
		err       string
	}{
		{"127.0.0.1:9000", nil, []string{"127.0.0.1:9000"}, ""},
		{"namenode", nil, []string{"namenode:8020"}, ""},
		{"[::1]:9000", nil, []string{"[::1]:9000"}, ""},
		{"mycluster", ha, []string{"namenode1:9000", "namenode2:9000"}, ""},
		{"single", ha, []string{"nn:8021"}, ""},
		{"other", ha, nil, "neither dfs.ha.namenodes.other"},
		{"broken", ha, nil, "dfs.namenode.rpc-address.broken.nn1 is not set"},
		{"", nil, nil, "needs a NameNode address or a nameservice"},
		{"user@nn:9000", nil, nil, "user information"},
		{"nn:port", nil, nil, "want host:port"},
		{":9000", nil, nil, "want host:port"},
	}
	for _, c := range cases {
		got, err := hdfsNameNodes(c.authority, c.conf)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: got %v, %v; want error %q", c.authority, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: got %v, %v; want %v", c.authority, got, err, c.want)
		}
	}
}
