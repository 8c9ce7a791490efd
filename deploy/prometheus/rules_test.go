// Package prometheus holds what an operator loads into Prometheus and
// Grafana for fluss-sidecar: the alerting rules (rules.yml, and the same
// groups as a PrometheusRule in prometheusrule.yaml), their promtool unit
// tests (rules_test.yml) and a Grafana dashboard (dashboard.json). Its
// tests prove them: promtool parses and unit-tests every rule, the two rule
// files hold the same groups, every alert has a runbook entry in
// docs/alerts.md, every expression names only series a running sidecar
// exports, and a real Prometheus scraping a real sidecar sees the alerts of
// two injected faults fire and resolve.
package prometheus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// runbookBase is where each alert's runbook_url points, followed by
// "#" and the alert's name in lower case (GitHub's anchor of the heading
// "## <AlertName>" in docs/alerts.md).
const runbookBase = "https://github.com/fluss-sidecar/fluss-sidecar/blob/main/docs/alerts.md"

// ruleFile is a Prometheus rule file, as far as the tests read it.
type ruleFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

type ruleGroup struct {
	Name  string `yaml:"name"`
	Rules []rule `yaml:"rules"`
}

type rule struct {
	Alert       string            `yaml:"alert,omitempty"`
	Record      string            `yaml:"record,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readRules(t *testing.T) []rule {
	t.Helper()
	var f ruleFile
	readYAML(t, "rules.yml", &f)
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		t.Fatal("rules.yml holds no rule")
	}
	return out
}

// promtool returns the path of promtool, failing the test with how to
// install it when it is missing.
func promtool(t *testing.T) string {
	t.Helper()
	skipIfShort(t)
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: run scripts/install-deps.sh (Debian: apt-get install -y prometheus)")
	}
	return p
}

func runPromtool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPromtoolCheckRules: both rule files parse, every expression
// included, and the plain file holds every alert.
func TestPromtoolCheckRules(t *testing.T) {
	out := runPromtool(t, "check", "rules", "rules.yml")
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(readRules(t))); !strings.Contains(out, want) {
		t.Errorf("promtool check rules: %q lacks %q", out, want)
	}
	// promtool reads a plain rule file only: check the PrometheusRule's
	// groups by writing them out as one.
	var pr struct {
		Spec ruleFile `yaml:"spec"`
	}
	readYAML(t, "prometheusrule.yaml", &pr)
	data, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "operator-rules.yml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, "check", "rules", path)
}

// TestPromtoolTestRules runs the unit tests of rules_test.yml.
func TestPromtoolTestRules(t *testing.T) {
	out := runPromtool(t, "test", "rules", "rules_test.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool test rules: %s", out)
	}
}

// unitTests is rules_test.yml as far as TestEveryAlertTested reads it.
type unitTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name        string `yaml:"name"`
		InputSeries []struct {
			Series string `yaml:"series"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `yaml:"exp_labels"`
				ExpAnnotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

var instanceLabel = regexp.MustCompile(`instance="([^"]*)"`)

// TestEveryAlertTested: every alert of rules.yml has, in rules_test.yml, a
// time at which it fires, a time at which it does not, and beside the
// instance it fires for an instance in the input that it never fires for
// (a healthy series); every firing case names the runbook.
func TestEveryAlertTested(t *testing.T) {
	var u unitTests
	readYAML(t, "rules_test.yml", &u)
	if !slices.Equal(u.RuleFiles, []string{"rules.yml"}) {
		t.Fatalf("rules_test.yml tests %v, want rules.yml", u.RuleFiles)
	}
	type cover struct{ fires, quiet, healthy bool }
	got := map[string]*cover{}
	for _, r := range readRules(t) {
		if r.Alert != "" {
			got[r.Alert] = &cover{}
		}
	}
	for _, tc := range u.Tests {
		var instances []string
		for _, s := range tc.InputSeries {
			if m := instanceLabel.FindStringSubmatch(s.Series); m != nil && !slices.Contains(instances, m[1]) {
				instances = append(instances, m[1])
			}
		}
		firing := map[string][]string{} // alert → instances it fires for in this test
		for _, c := range tc.AlertRuleTest {
			cv, ok := got[c.Alertname]
			if !ok {
				t.Errorf("test %q: alert %q is not in rules.yml", tc.Name, c.Alertname)
				continue
			}
			if len(c.ExpAlerts) == 0 {
				cv.quiet = true
			}
			for _, a := range c.ExpAlerts {
				cv.fires = true
				firing[c.Alertname] = append(firing[c.Alertname], a.ExpLabels["instance"])
				if !strings.HasPrefix(a.ExpAnnotations["runbook_url"], runbookBase+"#") {
					t.Errorf("test %q at %s: %s fires without its runbook_url", tc.Name, c.EvalTime, c.Alertname)
				}
			}
		}
		for alert, fired := range firing {
			for _, in := range instances {
				if !slices.Contains(fired, in) {
					got[alert].healthy = true
				}
			}
		}
	}
	for alert, cv := range got {
		if !cv.fires || !cv.quiet || !cv.healthy {
			t.Errorf("%s: fires in a test %v, a time it must not fire %v, a healthy instance beside %v", alert, cv.fires, cv.quiet, cv.healthy)
		}
	}
}

// TestPrometheusRuleMatchesRules: the PrometheusRule carries exactly the
// groups of rules.yml.
func TestPrometheusRuleMatchesRules(t *testing.T) {
	var plain map[string]any
	readYAML(t, "rules.yml", &plain)
	var pr struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Spec map[string]any `yaml:"spec"`
	}
	readYAML(t, "prometheusrule.yaml", &pr)
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Name == "" {
		t.Errorf("prometheusrule.yaml is %s %s %q, want a named monitoring.coreos.com/v1 PrometheusRule", pr.APIVersion, pr.Kind, pr.Metadata.Name)
	}
	if len(plain) != 1 || len(pr.Spec) != 1 {
		t.Errorf("rules.yml keys %v, PrometheusRule spec keys %v: want groups only", keys(plain), keys(pr.Spec))
	}
	if !reflect.DeepEqual(plain["groups"], pr.Spec["groups"]) {
		a, _ := yaml.Marshal(plain["groups"])
		b, _ := yaml.Marshal(pr.Spec["groups"])
		t.Errorf("prometheusrule.yaml's spec.groups differ from rules.yml's groups:\nrules.yml:\n%s\nprometheusrule.yaml:\n%s", a, b)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestRunbook: every alert has a severity an Alertmanager route can match,
// a summary and a description, and a runbook_url naming its own entry in
// docs/alerts.md, which exists; docs/alerts.md has no entry for an alert
// that is gone.
func TestRunbook(t *testing.T) {
	doc, err := os.ReadFile("../../docs/alerts.md")
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, l := range strings.Split(string(doc), "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok && strings.HasPrefix(h, "FlussSidecar") {
			headings = append(headings, strings.TrimSpace(h))
		}
	}
	var alerts []string
	for _, r := range readRules(t) {
		if r.Alert == "" {
			continue
		}
		alerts = append(alerts, r.Alert)
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
		}
		for _, k := range []string{"summary", "description"} {
			if r.Annotations[k] == "" {
				t.Errorf("%s: no %s annotation", r.Alert, k)
			}
		}
		if want := runbookBase + "#" + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if !slices.Contains(headings, r.Alert) {
			t.Errorf("%s: docs/alerts.md has no heading \"## %s\"", r.Alert, r.Alert)
		}
	}
	for _, h := range headings {
		if !slices.Contains(alerts, h) {
			t.Errorf("docs/alerts.md describes %s, which rules.yml does not have", h)
		}
	}
	if len(alerts) != len(slices.Compact(slices.Sorted(slices.Values(alerts)))) {
		t.Errorf("an alert name is used twice: %v", alerts)
	}
}

// dashboard is dashboard.json as far as the tests read it.
type dashboard struct {
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	Tags          []string `json:"tags"`
	SchemaVersion int      `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	return d
}

// allPanels lists the dashboard's panels, those inside collapsed rows
// included.
func (d dashboard) allPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// exprs returns every query of the dashboard, by panel title.
func (d dashboard) exprs() map[string][]string {
	out := map[string][]string{}
	for _, p := range d.allPanels() {
		for _, tg := range p.Targets {
			out[p.Title] = append(out[p.Title], tg.Expr)
		}
	}
	return out
}

// TestDashboardShape: the dashboard loads as Grafana provisions it: a uid
// and title, panel ids unique, every panel inside the 24-column grid, every
// query on the data source chosen in the ${datasource} variable, and the
// topics an operator looks for each on a panel.
func TestDashboardShape(t *testing.T) {
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" || !slices.Contains(d.Tags, "fluss") || d.SchemaVersion == 0 {
		t.Errorf("uid %q, title %q, tags %v, schemaVersion %d", d.UID, d.Title, d.Tags, d.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" || vars["instance"] != "query" {
		t.Errorf("template variables %v, want datasource (datasource) and instance (query)", vars)
	}
	ids := map[int]string{}
	for _, p := range d.allPanels() {
		if prev, ok := ids[p.ID]; ok || p.ID == 0 {
			t.Errorf("panel %q: id %d (also %q)", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %+v, want ${datasource}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q: query %s is empty", p.Title, tg.RefID)
			}
		}
	}
	exprs := d.exprs()
	for _, topic := range []struct{ what, series string }{
		{"request rate", "fluss_sidecar_request_requestsTotal"},
		{"errors by code", "fluss_sidecar_request_errorsTotal"},
		{"latency", "fluss_sidecar_request_totalTimeMs_bucket"},
		{"cache hit rate", "fluss_sidecar_snapshotCache_hitsTotal"},
		{"sync rounds", `op=~"sync|sync_get"`},
		{"ZooKeeper session state", "fluss_sidecar_zookeeper_sessionConnected"},
		{"storage", "fluss_sidecar_storage_remoteAcceptsWrites"},
		{"connections", "fluss_sidecar_connection_open"},
		{"memory", "process_resident_memory_bytes"},
	} {
		found := false
		for _, es := range exprs {
			for _, e := range es {
				found = found || strings.Contains(e, topic.series)
			}
		}
		if !found {
			t.Errorf("no panel shows %s (%s)", topic.what, topic.series)
		}
	}
}

// grafanaVars stands in for the dashboard's variables, so that a query
// parses as Prometheus receives it.
var grafanaVars = strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m", "$__range", "1h", "$instance", ".*")

// TestDashboardQueriesParse hands every dashboard query, variables
// substituted, to promtool as a recording rule: Prometheus's own parser
// accepts each.
func TestDashboardQueriesParse(t *testing.T) {
	var g ruleGroup
	g.Name = "dashboard"
	n := 0
	for _, es := range readDashboard(t).exprs() {
		for _, e := range es {
			n++
			g.Rules = append(g.Rules, rule{Record: fmt.Sprintf("dashboard:query%d", n), Expr: grafanaVars.Replace(e)})
		}
	}
	data, err := yaml.Marshal(ruleFile{Groups: []ruleGroup{g}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runPromtool(t, "check", "rules", path)
	if want := fmt.Sprintf("SUCCESS: %d rules found", n); !strings.Contains(out, want) {
		t.Errorf("promtool: %q lacks %q", out, want)
	}
}

// skipIfShort skips t under go test -short (make check), which runs neither
// promtool nor a Prometheus server (Debian's prometheus package). Without
// -short it does nothing: there a missing one fails the test.
func skipIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs promtool or a Prometheus server; not run under -short")
	}
}
