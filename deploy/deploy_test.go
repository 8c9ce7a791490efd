// Package deploy holds the packaging files (Dockerfile at the repository
// root, Kubernetes manifests, a systemd unit); its test checks that every
// configuration key, port, path and command line they use exists in the
// sidecar.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/app/opshttp"
	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// servedPaths are the HTTP paths probes and scrapes may use;
// TestServedPaths checks the metrics endpoint answers each of them.
var servedPaths = []string{"/metrics", "/healthz", "/readyz"}

// defaultMetricsPort is metrics.reporter.prometheus.port's default, as in
// Fluss.
const defaultMetricsPort = 9249

func knownKey(k string) bool { return app.IsKnownKey(k) }

// sidecarConfig is a server.yaml the packaging files ship, with what the
// checks need from it.
type sidecarConfig struct {
	where       string
	cfg         *config.Config
	rpcPorts    []int
	metricsPort int
	envNames    []string // ${env:NAME} references
}

// loadSidecarConfig parses a server.yaml, checks every key is known and
// that the sidecar accepts the whole configuration (references resolved
// with placeholder values).
func loadSidecarConfig(t *testing.T, where string, data []byte) sidecarConfig {
	t.Helper()
	sc := sidecarConfig{where: where}
	cfg, err := config.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, k := range cfg.Keys() {
		if !knownKey(k) {
			t.Errorf("%s: key %q is not one the sidecar reads", where, k)
		}
		v, _ := cfg.Lookup(k)
		for _, part := range strings.Split(v, "${env:")[1:] {
			name, _, _ := strings.Cut(part, "}")
			sc.envNames = append(sc.envNames, name)
		}
	}
	err = config.Providers{LookupEnv: func(string) (string, bool) { return "placeholder", true }}.Resolve(cfg)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	s, err := app.FromConfig(cfg)
	if err != nil {
		t.Fatalf("%s: the sidecar refuses this configuration: %v", where, err)
	}
	for _, l := range s.Listeners {
		sc.rpcPorts = append(sc.rpcPorts, l.Port)
	}
	// The tablet-server endpoints are RPC ports too, and must be fixed:
	// a manifest cannot expose a port the system picks at start.
	if s.Mode != app.ModeProxy {
		tablet, err := assembly.TabletListeners(s.Listeners, s.TabletListeners)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		for _, l := range tablet {
			if l.Port == 0 {
				t.Errorf("%s: the tablet-server endpoint of listener %s takes a free port at start, which cannot be exposed; set %s", where, l.Name, app.KeyTabletListeners)
			}
			sc.rpcPorts = append(sc.rpcPorts, l.Port)
		}
	} else if len(s.TabletListeners) > 0 {
		t.Errorf("%s: proxy mode has no tablet-server endpoint", where)
	}
	sc.metricsPort = defaultMetricsPort
	if v, ok := cfg.Lookup(app.KeyPrometheusPort); ok {
		ports, err := opshttp.ParsePorts(v)
		if err != nil || len(ports) != 1 {
			t.Fatalf("%s: %s %q: probes and scrapes need exactly one port (%v)", where, app.KeyPrometheusPort, v, err)
		}
		sc.metricsPort = ports[0]
	}
	if v, _ := cfg.Lookup(app.KeyMetricsReporters); v != "prometheus" {
		t.Errorf("%s: metrics.reporters is %q; probes and scrapes need prometheus", where, v)
	}
	sc.cfg = cfg
	return sc
}

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

// buildSidecar builds the binary once for the tests that run it.
func buildSidecar(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "deploy-test-"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "fluss-sidecar"), "../cmd/fluss-sidecar").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "fluss-sidecar")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// acceptsCommandLine runs the binary with args plus --help: the command
// exists and parses these arguments.
func acceptsCommandLine(t *testing.T, bin, where string, args []string) {
	t.Helper()
	cmd := exec.Command(bin, append(slices.Clone(args), "--help")...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil || !strings.HasPrefix(stdout.String(), "usage: fluss-sidecar "+args[0]) {
		t.Errorf("%s: command line %v is not accepted: %v %q", where, args, err, stdout.String())
	}
}

// configFileArg returns the --config argument of a serve command line.
func configFileArg(args []string) (string, error) {
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			return args[i+1], nil
		}
	}
	return "", errors.New("no --config FILE")
}

// k8s object shapes, as far as the checks read them.
type (
	k8sObject struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Data map[string]string `yaml:"data"`
		Spec struct {
			Replicas *int         `yaml:"replicas"`
			Template *podTemplate `yaml:"template"`
			Strategy struct {
				Type          string `yaml:"type"`
				RollingUpdate *struct {
					MaxSurge       any `yaml:"maxSurge"`
					MaxUnavailable any `yaml:"maxUnavailable"`
				} `yaml:"rollingUpdate"`
			} `yaml:"strategy"`
			// A PodDisruptionBudget's.
			MaxUnavailable any `yaml:"maxUnavailable"`
			Selector       struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Ports []struct {
				Name       string `yaml:"name"`
				Port       int    `yaml:"port"`
				TargetPort int    `yaml:"targetPort"`
			} `yaml:"ports"`
			PodMetricsEndpoints []struct {
				Port string `yaml:"port"`
				Path string `yaml:"path"`
			} `yaml:"podMetricsEndpoints"`
		} `yaml:"spec"`
	}
	podTemplate struct {
		Metadata struct {
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"metadata"`
		Spec struct {
			TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
			TopologySpreadConstraints     []struct {
				MaxSkew           int    `yaml:"maxSkew"`
				TopologyKey       string `yaml:"topologyKey"`
				WhenUnsatisfiable string `yaml:"whenUnsatisfiable"`
				LabelSelector     struct {
					MatchLabels map[string]string `yaml:"matchLabels"`
				} `yaml:"labelSelector"`
			} `yaml:"topologySpreadConstraints"`
			Containers []container `yaml:"containers"`
			Volumes    []struct {
				Name      string `yaml:"name"`
				ConfigMap *struct {
					Name string `yaml:"name"`
				} `yaml:"configMap"`
			} `yaml:"volumes"`
		} `yaml:"spec"`
	}
	container struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		Env []struct {
			Name string `yaml:"name"`
		} `yaml:"env"`
		ReadinessProbe *probe `yaml:"readinessProbe"`
		LivenessProbe  *probe `yaml:"livenessProbe"`
		VolumeMounts   []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	probe struct {
		HTTPGet *struct {
			Path string `yaml:"path"`
			Port int    `yaml:"port"`
		} `yaml:"httpGet"`
		PeriodSeconds    int `yaml:"periodSeconds"`
		FailureThreshold int `yaml:"failureThreshold"`
		TimeoutSeconds   int `yaml:"timeoutSeconds"`
	}
)

func readK8s(t *testing.T) map[string][]k8sObject {
	t.Helper()
	files, _ := filepath.Glob("kubernetes/*.yaml")
	if len(files) < 3 {
		t.Fatalf("kubernetes manifests: %v", files)
	}
	out := map[string][]k8sObject{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[f] = append(out[f], o)
		}
	}
	return out
}

// configMapsOf indexes the ConfigMaps of manifests by name.
func configMapsOf(manifests map[string][]k8sObject) map[string]k8sObject {
	out := map[string]k8sObject{}
	for _, objs := range manifests {
		for _, o := range objs {
			if o.Kind == "ConfigMap" {
				out[o.Metadata.Name] = o
			}
		}
	}
	return out
}

func TestKubernetesManifests(t *testing.T) {
	bin := buildSidecar(t)
	manifests := readK8s(t)
	configMaps := configMapsOf(manifests)
	sidecars := 0
	var podPortNames []string
	var podLabels []map[string]string
	for f, objs := range manifests {
		for _, o := range objs {
			if o.Spec.Template == nil {
				continue
			}
			pod := o.Spec.Template
			for _, c := range pod.Spec.Containers {
				if !strings.HasPrefix(c.Image, "fluss-sidecar") {
					continue
				}
				sidecars++
				where := fmt.Sprintf("%s %s/%s container %s", f, o.Kind, o.Metadata.Name, c.Name)
				acceptsCommandLine(t, bin, where, c.Args)
				cfgPath, err := configFileArg(c.Args)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				// The config file is a key of a ConfigMap mounted at its directory.
				var sc *sidecarConfig
				for _, m := range c.VolumeMounts {
					if m.MountPath != filepath.Dir(cfgPath) {
						continue
					}
					for _, v := range pod.Spec.Volumes {
						if v.Name == m.Name && v.ConfigMap != nil {
							cm, ok := configMaps[v.ConfigMap.Name]
							data, has := cm.Data[filepath.Base(cfgPath)]
							if !ok || !has {
								t.Fatalf("%s: ConfigMap %q has no %s", where, v.ConfigMap.Name, filepath.Base(cfgPath))
							}
							loaded := loadSidecarConfig(t, where+" ConfigMap "+cm.Metadata.Name, []byte(data))
							sc = &loaded
						}
					}
				}
				if sc == nil {
					t.Fatalf("%s: nothing is mounted at %s", where, filepath.Dir(cfgPath))
				}
				// Every ${env:NAME} is set in the container.
				for _, name := range sc.envNames {
					if !slices.ContainsFunc(c.Env, func(e struct {
						Name string `yaml:"name"`
					}) bool {
						return e.Name == name
					}) {
						t.Errorf("%s: the configuration uses ${env:%s}, which the container does not set", where, name)
					}
				}
				// Container ports are exactly the listeners and the metrics port.
				var ports []int
				for _, p := range c.Ports {
					ports = append(ports, p.ContainerPort)
					podPortNames = append(podPortNames, p.Name)
				}
				want := append(slices.Clone(sc.rpcPorts), sc.metricsPort)
				slices.Sort(ports)
				slices.Sort(want)
				if !slices.Equal(ports, want) {
					t.Errorf("%s: container ports %v, but the configuration listens on %v", where, ports, want)
				}
				for name, pr := range map[string]*probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
					if pr == nil || pr.HTTPGet == nil {
						t.Errorf("%s: no HTTP %s probe", where, name)
						continue
					}
					if pr.HTTPGet.Port != sc.metricsPort || !slices.Contains(servedPaths, pr.HTTPGet.Path) {
						t.Errorf("%s: %s probe on %d%s; the sidecar serves %v on %d", where, name, pr.HTTPGet.Port, pr.HTTPGet.Path, servedPaths, sc.metricsPort)
					}
				}
				if pr := c.ReadinessProbe; pr != nil && pr.HTTPGet != nil && pr.HTTPGet.Path != "/readyz" {
					t.Errorf("%s: the readiness probe must use /readyz", where)
				}
				ann := pod.Metadata.Annotations
				if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != strconv.Itoa(sc.metricsPort) || ann["prometheus.io/path"] != "/metrics" {
					t.Errorf("%s: scrape annotations %v, want port %d path /metrics", where, ann, sc.metricsPort)
				}
				podLabels = append(podLabels, pod.Metadata.Labels)
			}
		}
	}
	if sidecars < 2 {
		t.Fatalf("found %d sidecar containers, want the Deployment's and the coordinator pod's", sidecars)
	}
	// Services and PodMonitors point at ports and labels that exist.
	for f, objs := range manifests {
		for _, o := range objs {
			switch o.Kind {
			case "Deployment":
				if o.Metadata.Name == "fluss-sidecar" && o.Spec.Template != nil && len(o.Spec.Template.Spec.Containers) != 1 {
					t.Errorf("%s: the standalone Deployment runs only the sidecar", f)
				}
			case "Service":
				for _, p := range o.Spec.Ports {
					if !slices.Contains(podPortNames, p.Name) {
						t.Errorf("%s: Service port %q names no container port", f, p.Name)
					}
				}
			case "PodMonitor":
				for _, ep := range o.Spec.PodMetricsEndpoints {
					if !slices.Contains(podPortNames, ep.Port) || ep.Path != "/metrics" {
						t.Errorf("%s: PodMonitor endpoint %+v", f, ep)
					}
				}
				if !slices.ContainsFunc(podLabels, func(l map[string]string) bool {
					for k, v := range o.Spec.Selector.MatchLabels {
						if l[k] != v {
							return false
						}
					}
					return true
				}) {
					t.Errorf("%s: the PodMonitor selects no sidecar pod", f)
				}
			}
		}
	}
}

func TestDeploymentHasTwoReplicas(t *testing.T) {
	data, err := os.ReadFile("kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Replicas int `yaml:"replicas"`
		} `yaml:"spec"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&d); err != nil || d.Kind != "Deployment" || d.Spec.Replicas != 2 {
		t.Fatalf("deployment.yaml: %+v %v", d, err)
	}
}

// dockerfile is the parsed instructions of the final stage, and the build
// output of the build stage.
func readDockerfile(t *testing.T) (instr map[string][]string, buildOut string, finalBase string) {
	t.Helper()
	f, err := os.Open("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	instr = map[string][]string{}
	sc := bufio.NewScanner(f)
	var line string
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		line += l
		if strings.HasSuffix(line, "\\") {
			line = strings.TrimSuffix(line, "\\") + " "
			continue
		}
		if line == "" {
			continue
		}
		op, rest, _ := strings.Cut(line, " ")
		op = strings.ToUpper(op)
		if op == "FROM" {
			finalBase = strings.Fields(rest)[0]
			delete(instr, "USER")
		}
		if op == "RUN" && strings.Contains(rest, "go build") {
			fs := strings.Fields(rest)
			if i := slices.Index(fs, "-o"); i >= 0 && i+1 < len(fs) {
				buildOut = fs[i+1]
			}
			if !strings.Contains(rest, "CGO_ENABLED=0") {
				t.Errorf("Dockerfile: the build is not static (CGO_ENABLED=0): %s", rest)
			}
		}
		instr[op] = append(instr[op], rest)
		line = ""
	}
	return instr, buildOut, finalBase
}

func jsonArray(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("Dockerfile: %q is not an exec-form array: %v", s, err)
	}
	return out
}

func TestDockerfile(t *testing.T) {
	bin := buildSidecar(t)
	instr, buildOut, base := readDockerfile(t)
	if base != "scratch" && !strings.Contains(base, "distroless") {
		t.Errorf("final base %q is not minimal", base)
	}
	user := instr["USER"]
	if len(user) != 1 || strings.HasPrefix(user[0], "0") || strings.HasPrefix(user[0], "root") {
		t.Errorf("USER %v: the image must run as a non-root user", user)
	}
	entry := jsonArray(t, instr["ENTRYPOINT"][0])
	cmd := jsonArray(t, instr["CMD"][0])
	if len(entry) != 1 || filepath.Base(entry[0]) != filepath.Base(buildOut) {
		t.Errorf("ENTRYPOINT %v does not run the built %s", entry, buildOut)
	}
	if !slices.ContainsFunc(instr["COPY"], func(c string) bool { return strings.Contains(c, buildOut) && strings.HasSuffix(c, " "+entry[0]) }) {
		t.Errorf("no COPY puts %s at %s", buildOut, entry[0])
	}
	acceptsCommandLine(t, bin, "Dockerfile CMD", cmd)
	cfgPath, err := configFileArg(cmd)
	if err != nil {
		t.Fatal(err)
	}
	// The default listener and metrics ports are exposed.
	var exposed []int
	for _, e := range instr["EXPOSE"] {
		for _, p := range strings.Fields(e) {
			n, _ := strconv.Atoi(p)
			exposed = append(exposed, n)
		}
	}
	ls, err := config.ParseListeners(app.DefaultListeners)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{ls[0].Port, app.PackagedTabletPort, defaultMetricsPort} {
		if !slices.Contains(exposed, p) {
			t.Errorf("EXPOSE %v lacks %d", exposed, p)
		}
	}
	// The Kubernetes manifests mount the configuration where CMD reads it.
	for f, objs := range readK8s(t) {
		for _, o := range objs {
			if o.Spec.Template == nil {
				continue
			}
			for _, c := range o.Spec.Template.Spec.Containers {
				if strings.HasPrefix(c.Image, "fluss-sidecar") {
					if p, _ := configFileArg(c.Args); p != cfgPath {
						t.Errorf("%s: container %s reads %s, the image's CMD %s", f, c.Name, p, cfgPath)
					}
				}
			}
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	bin := buildSidecar(t)
	data, err := os.ReadFile("systemd/fluss-sidecar.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			unit[k] = v
		}
	}
	exec := strings.Fields(unit["ExecStart"])
	if len(exec) < 2 || filepath.Base(exec[0]) != "fluss-sidecar" {
		t.Fatalf("ExecStart %q", unit["ExecStart"])
	}
	acceptsCommandLine(t, bin, "ExecStart", exec[1:])
	cfgPath, err := configFileArg(exec[1:])
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(cfgPath) != "/etc/"+unit["ConfigurationDirectory"] {
		t.Errorf("ExecStart reads %s, but ConfigurationDirectory is %s", cfgPath, unit["ConfigurationDirectory"])
	}
	if unit["User"] == "root" || (unit["DynamicUser"] != "yes" && unit["User"] == "") {
		t.Errorf("the unit must not run as root")
	}
	example, err := os.ReadFile("systemd/server.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc := loadSidecarConfig(t, "systemd/server.yaml", example)
	dir, _ := sc.cfg.Lookup("remote.data.dir")
	if !strings.HasPrefix(strings.TrimPrefix(dir, "file://"), "/var/lib/"+unit["StateDirectory"]+"/") {
		t.Errorf("remote.data.dir %s is outside the unit's StateDirectory %s (ProtectSystem=strict makes the rest read-only)", dir, unit["StateDirectory"])
	}
}

// TestServedPaths starts the metrics endpoint the sidecar runs and checks
// it answers every path the packaging files probe or scrape.
func TestServedPaths(t *testing.T) {
	srv, err := opshttp.Start(opshttp.Config{Host: "127.0.0.1", Ports: []int{0}, Gatherer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	for _, p := range servedPaths {
		resp, err := http.Get("http://" + srv.Addr() + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", p, resp.StatusCode)
		}
	}
	if resp, err := http.Get("http://" + srv.Addr() + "/nope"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unserved path answers: %v %v", resp, err)
	}
}

// TestSystemdOpenFiles: the unit's LimitNOFILE lets a sidecar with default
// settings take a 4,000-connection storm in proxy mode, and the
// unit's comment gives the connection limit the sidecar derives from it.
func TestSystemdOpenFiles(t *testing.T) {
	data, err := os.ReadFile("systemd/fluss-sidecar.service")
	if err != nil {
		t.Fatal(err)
	}
	var limit uint64
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "LimitNOFILE="); ok {
			if limit, err = strconv.ParseUint(v, 10, 64); err != nil {
				t.Fatalf("LimitNOFILE=%s: %v", v, err)
			}
		}
	}
	if limit == 0 {
		t.Fatal("the unit sets no LimitNOFILE")
	}
	f := app.FileLimit{Known: true, Soft: limit, Hard: limit, Current: limit}
	standalone, proxy := app.DeriveMaxConnections(f, false), app.DeriveMaxConnections(f, true)
	if proxy < 4000 {
		t.Errorf("LimitNOFILE=%d gives %d connections in proxy mode, fewer than a 4,000-connection storm", limit, proxy)
	}
	if want := "(" + strconv.Itoa(standalone) + " connections per listener"; !strings.Contains(string(data), want) {
		t.Errorf("the unit's comment does not say %q", want)
	}
}
