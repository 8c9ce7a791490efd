package app

import (
	"reflect"
	"testing"
)

// TestLimitsCarryEveryKey: every limit the assembly applies comes from its
// key, none is left at zero (a zero limit is wire's default, not the key).
func TestLimitsCarryEveryKey(t *testing.T) {
	s, err := FromConfig(baseConfig(map[string]string{KeyMaxConnections: "7"}))
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(s.Limits())
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("Limits.%s is not set from Settings", v.Type().Field(i).Name)
		}
	}
	if l := s.Limits(); l.MaxConns != 7 || l.MaxRunningPerConn != int(defaultInt(KeyMaxRunningPerConn)) {
		t.Errorf("limits %+v", l)
	}
}
