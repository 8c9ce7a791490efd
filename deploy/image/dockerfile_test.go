package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	op   string // upper case
	args string
}

// dockerfile is what the checks need from the Dockerfile: the final
// stage's base and instructions, and the build stage's go build command.
type dockerfile struct {
	finalBase string
	final     []instruction
	goBuild   string
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d dockerfile
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
		if strings.TrimSpace(line) == "" {
			line = ""
			continue
		}
		op, args, _ := strings.Cut(line, " ")
		in := instruction{op: strings.ToUpper(op), args: strings.TrimSpace(args)}
		line = ""
		switch {
		case in.op == "FROM":
			d.finalBase = strings.Fields(in.args)[0]
			d.final = nil
		case in.op == "RUN" && strings.Contains(in.args, "go build"):
			d.goBuild = in.args
			d.final = append(d.final, in)
		default:
			d.final = append(d.final, in)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return d
}

// execForm parses an exec-form (JSON array) ENTRYPOINT or CMD.
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(in.args), &v); err != nil {
		t.Fatalf("Dockerfile %s %s: not an exec-form array: %v", in.op, in.args, err)
	}
	return v
}

// dockerCopy is a COPY instruction of the final stage.
type dockerCopy struct {
	from     string
	uid, gid int
	srcs     []string
	dest     string
}

func parseCopy(t *testing.T, args string) dockerCopy {
	t.Helper()
	c := dockerCopy{}
	fields := strings.Fields(args)
	for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
		k, v, _ := strings.Cut(strings.TrimPrefix(fields[0], "--"), "=")
		switch k {
		case "from":
			c.from = v
		case "chown":
			u, g, ok := strings.Cut(v, ":")
			var err1, err2 error
			c.uid, err1 = strconv.Atoi(u)
			c.gid, err2 = strconv.Atoi(g)
			if !ok || err1 != nil || err2 != nil {
				t.Fatalf("Dockerfile COPY --chown=%s: this test compares numeric uid:gid only", v)
			}
		default:
			t.Fatalf("Dockerfile COPY --%s: this test does not know the flag; compare it with the buildah image here", k)
		}
		fields = fields[1:]
	}
	if len(fields) < 2 {
		t.Fatalf("Dockerfile COPY %s: want sources and a destination", args)
	}
	c.srcs, c.dest = fields[:len(fields)-1], fields[len(fields)-1]
	return c
}

var ldflagsRe = regexp.MustCompile(`-ldflags=?(?:"([^"]*)"|'([^']*)')`)

// linkFlags are the linker flags that shape the binary: -s, -w and the
// names (not values) of the -X variables.
func linkFlags(ldflags string) []string {
	var out []string
	fs := strings.Fields(ldflags)
	for i := 0; i < len(fs); i++ {
		switch {
		case fs[i] == "-X" && i+1 < len(fs):
			name, _, _ := strings.Cut(fs[i+1], "=")
			out = append(out, "-X "+name)
			i++
		case strings.HasPrefix(fs[i], "-"):
			out = append(out, fs[i])
		}
	}
	slices.Sort(out)
	return out
}

// TestImageMatchesDockerfile keeps scripts/build-image.sh and the
// Dockerfile in step: the buildah image has the Dockerfile final stage's
// base, user, ports, entry point, command, and COPY destinations with their
// owners, nothing else, and a binary built with the same flags (Go does not
// record -ldflags with -trimpath, so their effects are checked: the stamped
// values, no symbol table, no DWARF).
func TestImageMatchesDockerfile(t *testing.T) {
	img := builtImage(t)
	d := readDockerfile(t)
	cfg := img.config.Config

	if d.finalBase != "scratch" {
		t.Errorf("Dockerfile final base %q: the buildah image is built on scratch", d.finalBase)
	}
	if base := img.manifest.Annotations["org.opencontainers.image.base.name"]; base != "" || len(img.manifest.Layers) != 1 {
		t.Errorf("the buildah image has base %q and %d layers; want no base and one layer", base, len(img.manifest.Layers))
	}

	// Where the build stage puts what it builds; other files copied from it
	// are its system's, which the buildah build takes from the host.
	buildFields := strings.Fields(d.goBuild)
	i := slices.Index(buildFields, "-o")
	if i < 0 || i+1 == len(buildFields) {
		t.Fatalf("Dockerfile: go build without -o: %s", d.goBuild)
	}
	outDir := path.Dir(buildFields[i+1])

	// Every COPY destination, with the owner the Dockerfile gives it.
	owners := map[string][2]int{}
	var users, entrypoints, cmds []instruction
	var exposed []string
	for _, in := range d.final {
		switch in.op {
		case "COPY":
			c := parseCopy(t, in.args)
			dest := strings.TrimPrefix(path.Clean(c.dest), "/")
			owners[dest] = [2]int{c.uid, c.gid}
			for _, src := range c.srcs {
				if c.from != "" && !strings.HasPrefix(src, outDir+"/") {
					checkHostFile(t, img, src, dest)
				}
			}
		case "USER":
			users = append(users, in)
		case "EXPOSE":
			for _, p := range strings.Fields(in.args) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				exposed = append(exposed, p)
			}
		case "ENTRYPOINT":
			entrypoints = append(entrypoints, in)
		case "CMD":
			cmds = append(cmds, in)
		default:
			t.Errorf("Dockerfile final stage: %s %s: this test does not compare %s with the buildah image; add it here and to scripts/build-image.sh", in.op, in.args, in.op)
		}
	}
	if len(users) != 1 || users[0].args != cfg.User {
		t.Errorf("Dockerfile USER %v, buildah image user %q", users, cfg.User)
	}
	var ports []string
	for p := range cfg.ExposedPorts {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	slices.Sort(exposed)
	if !slices.Equal(ports, exposed) {
		t.Errorf("Dockerfile EXPOSE %v, buildah image exposes %v", exposed, ports)
	}
	if len(entrypoints) != 1 || !slices.Equal(execForm(t, entrypoints[0]), cfg.Entrypoint) {
		t.Errorf("Dockerfile ENTRYPOINT %v, buildah image %q", entrypoints, cfg.Entrypoint)
	}
	if len(cmds) != 1 || !slices.Equal(execForm(t, cmds[0]), cfg.Cmd) {
		t.Errorf("Dockerfile CMD %v, buildah image %q", cmds, cfg.Cmd)
	}
	// What the Dockerfile does not set, the buildah image does not either.
	if len(cfg.Env) != 0 || cfg.WorkingDir != "" || len(cfg.Volumes) != 0 || len(cfg.Labels) != 0 || cfg.StopSignal != "" {
		t.Errorf("the buildah image sets what the Dockerfile does not: env %q, workdir %q, volumes %v, labels %v, stop signal %q",
			cfg.Env, cfg.WorkingDir, cfg.Volumes, cfg.Labels, cfg.StopSignal)
	}

	// Each entry is a COPY destination with its owner, or a parent
	// directory of one, which Docker creates owned by root, mode 0755.
	for dest := range owners {
		if _, ok := img.entry(dest); !ok {
			t.Errorf("Dockerfile copies to /%s; the buildah image has no such path", dest)
		}
	}
	for _, e := range img.entries {
		if o, ok := owners[e.Name]; ok {
			if e.UID != o[0] || e.GID != o[1] {
				t.Errorf("%s: the Dockerfile's COPY gives it owner %d:%d", e, o[0], o[1])
			}
			continue
		}
		parent := false
		for dest := range owners {
			parent = parent || strings.HasPrefix(dest, e.Name+"/")
		}
		if !parent {
			t.Errorf("%s: the Dockerfile puts nothing there", e)
		} else if e.Type != tar.TypeDir || e.UID != 0 || e.GID != 0 || e.Mode != 0o755 {
			t.Errorf("%s: a parent directory Docker would create as root, mode 0755", e)
		}
	}

	// The binary is built with the Dockerfile's flags.
	if d.goBuild == "" {
		t.Fatal("Dockerfile: no RUN ... go build")
	}
	m := ldflagsRe.FindStringSubmatch(d.goBuild)
	if m == nil {
		t.Fatalf("Dockerfile: go build without a quoted -ldflags: %s", d.goBuild)
	}
	bi := binaryBuildSettings(t, img)
	bin := extractBinary(t, img)
	var stamped []string
	for name := range stamps {
		stamped = append(stamped, "-X "+name)
	}
	for _, f := range linkFlags(m[1] + m[2]) {
		switch {
		case f == "-s" || f == "-w":
		case strings.HasPrefix(f, "-X "):
			if !slices.Contains(stamped, f) {
				t.Errorf("Dockerfile stamps %s; scripts/build-image.sh (or this test's stamps) does not", f)
			}
			stamped = slices.DeleteFunc(stamped, func(s string) bool { return s == f })
		default:
			t.Errorf("Dockerfile linker flag %s: this test does not compare it with the buildah image's binary", f)
		}
	}
	if len(stamped) != 0 {
		t.Errorf("the buildah image's binary is stamped with %v; the Dockerfile is not", stamped)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range stamps {
		if !bytes.Contains(data, []byte(v)) {
			t.Errorf("the buildah image's binary does not hold %s=%s", name, v)
		}
	}
	// -s drops the symbol table, -w the DWARF sections.
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	var symtab, dwarf bool
	for _, sec := range ef.Sections {
		symtab = symtab || sec.Name == ".symtab"
		dwarf = dwarf || strings.HasPrefix(sec.Name, ".debug_") || strings.HasPrefix(sec.Name, ".zdebug_")
	}
	flags := linkFlags(m[1] + m[2])
	if slices.Contains(flags, "-s") == symtab {
		t.Errorf("Dockerfile -s %v, buildah image's binary has a symbol table %v", slices.Contains(flags, "-s"), symtab)
	}
	if slices.Contains(flags, "-w") == dwarf {
		t.Errorf("Dockerfile -w %v, buildah image's binary has DWARF %v", slices.Contains(flags, "-w"), dwarf)
	}
	for flag, setting := range map[string]string{"CGO_ENABLED=0": "CGO_ENABLED=0", "-trimpath": "-trimpath=true"} {
		k, v, _ := strings.Cut(setting, "=")
		inDockerfile := slices.Contains(strings.Fields(d.goBuild), flag)
		if inDockerfile != (bi[k] == v) {
			t.Errorf("%s: in the Dockerfile's build %v, in the buildah image's binary %s=%q", flag, inDockerfile, k, bi[k])
		}
	}
}

// binaryBuildSettings returns the build settings recorded in the image's
// binary.
func binaryBuildSettings(t *testing.T, img *ociImage) map[string]string {
	t.Helper()
	info, err := buildinfo.ReadFile(extractBinary(t, img))
	if err != nil {
		t.Fatalf("build info of the image's binary: %v", err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	return settings
}

// checkHostFile: a file the Dockerfile copies from its build image's system
// (src) is, in the buildah image, the host's file at the same path.
func checkHostFile(t *testing.T, img *ociImage, src, dest string) {
	t.Helper()
	host, err := os.ReadFile(src)
	if err != nil {
		t.Errorf("Dockerfile copies %s from the build image; the host has no such file for the buildah build: %v", src, err)
		return
	}
	var got []byte
	found := false
	err = img.walkLayer(func(e layerEntry, r io.Reader) error {
		if e.Name != dest {
			return nil
		}
		found = true
		b, err := io.ReadAll(r)
		got = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if found && !bytes.Equal(got, host) {
		t.Errorf("/%s in the buildah image is not the host's %s", dest, src)
	}
}
