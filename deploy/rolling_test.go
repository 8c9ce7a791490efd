package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
)

// stopMargin is what a stop timeout must leave beyond the accept delay and
// the drain timeout: the writes that outlived their requests settle and
// the stores close after the drain.
const stopMargin = 5 * time.Second

// sidecarPod is a pod template running the sidecar, with the settings its
// mounted server.yaml gives.
type sidecarPod struct {
	where    string
	obj      k8sObject
	pod      *podTemplate
	c        container
	settings app.Settings
}

// sidecarPods finds every sidecar container of the manifests and reads the
// configuration mounted for it.
func sidecarPods(t *testing.T) ([]sidecarPod, map[string][]k8sObject) {
	t.Helper()
	manifests := readK8s(t)
	configMaps := configMapsOf(manifests)
	var out []sidecarPod
	for f, objs := range manifests {
		for _, o := range objs {
			if o.Spec.Template == nil {
				continue
			}
			for _, c := range o.Spec.Template.Spec.Containers {
				if !strings.HasPrefix(c.Image, "fluss-sidecar") {
					continue
				}
				where := fmt.Sprintf("%s %s/%s container %s", f, o.Kind, o.Metadata.Name, c.Name)
				cfgPath, err := configFileArg(c.Args)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				var data string
				for _, m := range c.VolumeMounts {
					for _, v := range o.Spec.Template.Spec.Volumes {
						if m.MountPath == filepath.Dir(cfgPath) && v.Name == m.Name && v.ConfigMap != nil {
							data = configMaps[v.ConfigMap.Name].Data[filepath.Base(cfgPath)]
						}
					}
				}
				sc := loadSidecarConfig(t, where, []byte(data))
				s, err := app.FromConfig(sc.cfg)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				out = append(out, sidecarPod{where: where, obj: o, pod: o.Spec.Template, c: c, settings: s})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no sidecar container in the manifests")
	}
	return out, manifests
}

// selects reports whether a selector's labels all hold on a pod.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// intOrString reads a YAML int-or-string field ("1", 1).
func intOrString(v any) string { return fmt.Sprint(v) }

// TestRollingRestartManifests: the manifests let Kubernetes replace a
// sidecar without refusing a connection or cutting a request, with the
// binary's own shutdown settings. The grace period covers the accept delay
// plus the drain timeout; readiness turns within the accept delay; a
// rolling update starts the new pod before stopping an old one; a
// disruption budget and topology spread keep one replica serving.
func TestRollingRestartManifests(t *testing.T) {
	pods, manifests := sidecarPods(t)
	for _, p := range pods {
		s := p.settings
		stop := s.ShutdownAcceptDelay + s.ShutdownDrainTimeout + stopMargin
		if g := p.pod.Spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < stop {
			t.Errorf("%s: terminationGracePeriodSeconds %v does not cover the accept delay %v, the drain timeout %v and %v more",
				p.where, g, s.ShutdownAcceptDelay, s.ShutdownDrainTimeout, stopMargin)
		}
		// Kubernetes's probe defaults: every 10 s, 3 failures, 1 s timeout.
		pr := p.c.ReadinessProbe
		if pr == nil {
			t.Errorf("%s: no readiness probe", p.where)
			continue
		}
		period, failures, timeout := 10, 3, 1
		if pr.PeriodSeconds > 0 {
			period = pr.PeriodSeconds
		}
		if pr.FailureThreshold > 0 {
			failures = pr.FailureThreshold
		}
		if pr.TimeoutSeconds > 0 {
			timeout = pr.TimeoutSeconds
		}
		if turn := time.Duration(period*failures+timeout) * time.Second; turn > s.ShutdownAcceptDelay {
			t.Errorf("%s: the readiness probe may take %v to see /readyz turn 503, longer than the accept delay %v", p.where, turn, s.ShutdownAcceptDelay)
		}
		if p.obj.Kind != "Deployment" {
			continue
		}
		labels := p.pod.Metadata.Labels
		if r := p.obj.Spec.Replicas; r == nil || *r < 2 {
			t.Errorf("%s: %v replicas; a rolling restart needs another one serving", p.where, r)
		}
		st := p.obj.Spec.Strategy
		if st.Type != "RollingUpdate" || st.RollingUpdate == nil ||
			intOrString(st.RollingUpdate.MaxSurge) != "1" || intOrString(st.RollingUpdate.MaxUnavailable) != "0" {
			t.Errorf("%s: strategy %+v, want RollingUpdate with maxSurge 1, maxUnavailable 0", p.where, st)
		}
		spread := false
		for _, tc := range p.pod.Spec.TopologySpreadConstraints {
			if tc.TopologyKey == "kubernetes.io/hostname" && tc.MaxSkew == 1 && selects(tc.LabelSelector.MatchLabels, labels) {
				spread = true
			}
		}
		if !spread {
			t.Errorf("%s: no topology spread of its pods over nodes (kubernetes.io/hostname, maxSkew 1)", p.where)
		}
		budget := false
		for _, objs := range manifests {
			for _, o := range objs {
				if o.Kind == "PodDisruptionBudget" && selects(o.Spec.Selector.MatchLabels, labels) {
					if intOrString(o.Spec.MaxUnavailable) != "1" {
						t.Errorf("PodDisruptionBudget %s: maxUnavailable %v, want 1", o.Metadata.Name, o.Spec.MaxUnavailable)
					}
					budget = true
				}
			}
		}
		if !budget {
			t.Errorf("%s: no PodDisruptionBudget selects its pods", p.where)
		}
	}
}

// TestSystemdStopTimeout: systemd waits for the accept delay and the drain
// of the unit's example configuration before it sends SIGKILL.
func TestSystemdStopTimeout(t *testing.T) {
	data, err := os.ReadFile("systemd/fluss-sidecar.service")
	if err != nil {
		t.Fatal(err)
	}
	var stop time.Duration
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "TimeoutStopSec="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("TimeoutStopSec=%s is not a number of seconds", v)
			}
			stop = time.Duration(n) * time.Second
		}
	}
	example, err := os.ReadFile("systemd/server.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := app.FromConfig(loadSidecarConfig(t, "systemd/server.yaml", example).cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := s.ShutdownAcceptDelay + s.ShutdownDrainTimeout + stopMargin; stop < want {
		t.Fatalf("TimeoutStopSec %v does not cover the accept delay %v, the drain timeout %v and %v more", stop, s.ShutdownAcceptDelay, s.ShutdownDrainTimeout, stopMargin)
	}
}
