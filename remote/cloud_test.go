package remote

import (
	"strings"
	"testing"
)

func TestAzureAuthority(t *testing.T) {
	cases := []struct {
		scheme, authority                string
		container, account, service, err string
	}{
		{"abfss", "c@acct.dfs.core.windows.net", "c", "acct", "https://acct.blob.core.windows.net/", ""},
		{"abfs", "c@acct.dfs.core.windows.net", "c", "acct", "http://acct.blob.core.windows.net/", ""},
		{"wasbs", "c@acct.blob.core.windows.net", "c", "acct", "https://acct.blob.core.windows.net/", ""},
		{"abfss", "c@acct.dfs.core.chinacloudapi.cn", "c", "acct", "https://acct.blob.core.chinacloudapi.cn/", ""},
		{"abfss", "c@acct", "c", "acct", "https://acct.blob.core.windows.net/", ""},
		{"abfss", "acct.dfs.core.windows.net", "", "", "", "want container@account"},
		{"abfss", "@acct.dfs.core.windows.net", "", "", "", "want container@account"},
		{"abfss", "c@.dfs.core.windows.net", "", "", "", "no account name"},
	}
	for _, c := range cases {
		cont, acct, svc, err := azureAuthority(c.scheme, c.authority)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: got %v, want %q", c.scheme, c.authority, err, c.err)
			}
			continue
		}
		if err != nil || cont != c.container || acct != c.account || svc != c.service {
			t.Errorf("%s %s: got %q %q %q %v", c.scheme, c.authority, cont, acct, svc, err)
		}
	}
}
