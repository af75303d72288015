package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// drainBound is how long serve gives calls in flight after SIGTERM before
// it cancels them (the replicas' drain, docs/team.md): the pod's grace
// period must cover it and the preStop sleep.
const drainBound = 25

// object is one decoded manifest: its Kubernetes API type, by kind.
type object struct {
	kind, name string
	value      any
}

// newObject returns a pointer to the API type of apiVersion and kind, or an
// error for a kind the deployment files are not expected to hold.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1 PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}, nil
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, nil
	case "networking.k8s.io/v1 Ingress":
		return &networkingv1.Ingress{}, nil
	}
	return nil, fmt.Errorf("unknown kind %q of apiVersion %q (add it to newObject if it is meant to be there)", kind, apiVersion)
}

// decodeStrict decodes one YAML document into its API type: an unknown
// kind, an unknown field (a typo) or a value of the wrong type is an error.
func decodeStrict(doc []byte) (object, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return object{}, err
	}
	v, err := newObject(head.APIVersion, head.Kind)
	if err != nil {
		return object{}, err
	}
	// As the API server decodes: field names case-sensitive (encoding/json
	// would take "targetport" for targetPort), no duplicate or unknown field.
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return object{}, fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
	}
	strict, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err = errors.Join(append([]error{err}, strict...)...); err != nil {
		return object{}, fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
	}
	return object{kind: head.Kind, name: head.Metadata.Name, value: v}, nil
}

// build runs kustomize (krusty, in process) on dir of fsys and decodes
// every resulting object strictly.
func build(fsys filesys.FileSystem, dir string) ([]object, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var objs []object
	for _, r := range m.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		o, err := decodeStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// one returns the only object of type T, failing the test unless there is
// exactly one.
func one[T any](t *testing.T, objs []object) *T {
	t.Helper()
	var found []*T
	for _, o := range objs {
		if v, ok := o.value.(*T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("want one %T, got %d", zero, len(found))
	}
	return found[0]
}

func count[T any](objs []object) int {
	n := 0
	for _, o := range objs {
		if _, ok := o.value.(*T); ok {
			n++
		}
	}
	return n
}

func TestOverlays(t *testing.T) {
	overlays, err := filepath.Glob("k8s/overlays/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(overlays) != 2 {
		t.Fatalf("overlays: %v, want single and team", overlays)
	}
	for _, dir := range overlays {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			objs, err := build(filesys.MakeFsOnDisk(), dir)
			if err != nil {
				t.Fatal(err)
			}
			checkOverlay(t, filepath.Base(dir), objs)
		})
	}
}

// checkOverlay checks what a typo would break silently: names and labels
// that must match, ports, probes, the configuration and where secrets come
// from.
func checkOverlay(t *testing.T, overlay string, objs []object) {
	d := one[appsv1.Deployment](t, objs)
	svc := one[corev1.Service](t, objs)
	cm := one[corev1.ConfigMap](t, objs)
	pdb := one[policyv1.PodDisruptionBudget](t, objs)
	pod := d.Spec.Template.Spec
	podLabels := d.Spec.Template.Labels

	// Labels and selectors.
	if d.Spec.Selector == nil || !subset(d.Spec.Selector.MatchLabels, podLabels) || len(d.Spec.Selector.MatchExpressions) > 0 {
		t.Errorf("Deployment selector %v does not select its pods' labels %v", d.Spec.Selector, podLabels)
	}
	if len(svc.Spec.Selector) == 0 || !subset(svc.Spec.Selector, podLabels) {
		t.Errorf("Service selector %v does not select the pods' labels %v", svc.Spec.Selector, podLabels)
	}
	if pdb.Spec.Selector == nil || !subset(pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("PodDisruptionBudget selector %v does not select the pods' labels %v", pdb.Spec.Selector, podLabels)
	}

	// The container, its arguments and port.
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image == "" {
		t.Error("the container has no image")
	}
	flags := parseArgs(t, c.Args)
	httpAddr := flags["--http"]
	if c.Args[0] != "serve" || httpAddr != "0.0.0.0:8080" {
		t.Errorf("args %q: want serve --http 0.0.0.0:8080", c.Args)
	}
	listenPort := intstr.Parse(httpAddr[strings.LastIndex(httpAddr, ":")+1:])
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if port(ports, listenPort) != 8080 || len(c.Ports) != 1 {
		t.Errorf("container ports %v: want the one serve listens on, 8080", c.Ports)
	}
	if len(svc.Spec.Ports) != 1 || port(ports, svc.Spec.Ports[0].TargetPort) != 8080 {
		t.Errorf("Service ports %v: want one whose targetPort is the container's port 8080", svc.Spec.Ports)
	}
	_, stateless := flags["--stateless"]
	if want := overlay == "team"; stateless != want {
		t.Errorf("%s: --stateless in args is %v, want %v (the team overlay serves without sessions)", overlay, stateless, want)
	}

	// Probes: alive at /healthz, ready at /readyz, on the serving port.
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no %s probe over HTTP", p.name)
			continue
		}
		if g := p.probe.HTTPGet; g.Path != p.path || port(ports, g.Port) != 8080 {
			t.Errorf("%s probe GET %s on port %s: want %s on the container port 8080", p.name, g.Path, g.Port.String(), p.path)
		}
	}

	// Drain: the grace period covers the preStop sleep and the drain bound.
	var preStop int64
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = c.Lifecycle.PreStop.Sleep.Seconds
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < preStop+drainBound {
		t.Errorf("terminationGracePeriodSeconds %s: want at least the preStop sleep %d s + the drain bound %d s", show(g), preStop, drainBound)
	}

	// Security: non-root, read-only root, every writable directory a volume.
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("the pod does not set runAsNonRoot: true")
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("the container does not set readOnlyRootFilesystem: true and allowPrivilegeEscalation: false")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		if n := sources(v.VolumeSource); n != 1 {
			t.Errorf("volume %s has %d sources, want 1 (a patch that adds one must remove the other)", v.Name, n)
		}
		volumes[v.Name] = v
	}
	used := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("volume mount %s names no volume %q", m.MountPath, m.Name)
		}
		used[m.Name] = true
	}
	for name := range volumes {
		if !used[name] {
			t.Errorf("volume %s is mounted nowhere", name)
		}
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, name := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "TMPDIR"} {
		dir := env[name].Value
		if m := mountOf(c.VolumeMounts, dir); dir == "" || m == nil || m.ReadOnly {
			t.Errorf("$%s=%q is not in a writable volume: the root file system is read-only", name, dir)
		}
	}
	switch overlay {
	case "single":
		for _, dir := range []string{env["XDG_STATE_HOME"].Value, env["XDG_CACHE_HOME"].Value} {
			if m := mountOf(c.VolumeMounts, dir); m == nil || volumes[m.Name].PersistentVolumeClaim == nil {
				t.Errorf("single: %s (credentials, audit, the catalog with pins) is not on a PersistentVolumeClaim", dir)
			} else if count[corev1.PersistentVolumeClaim](objs) != 1 || one[corev1.PersistentVolumeClaim](t, objs).Name != volumes[m.Name].PersistentVolumeClaim.ClaimName {
				t.Errorf("single: the claim %s is not the overlay's PersistentVolumeClaim", volumes[m.Name].PersistentVolumeClaim.ClaimName)
			}
		}
	}

	// The token: a file of the Secret volume, named by --token-file.
	tokenFile := flags["--token-file"]
	if m := mountOf(c.VolumeMounts, tokenFile); m == nil || volumes[m.Name].Secret == nil {
		t.Errorf("--token-file %q is not in a Secret volume", tokenFile)
	}

	// Environment variables that hold secrets come from a Secret, never a
	// literal; the rest are not secret-looking.
	secretish := regexp.MustCompile(`TOKEN|KEY|PASSWORD|SECRET|DATABASE_URL`)
	for _, e := range c.Env {
		fromSecret := e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
		if secretish.MatchString(e.Name) && (!fromSecret || e.Value != "") {
			t.Errorf("env %s looks like a secret but does not come from a Secret (valueFrom.secretKeyRef)", e.Name)
		}
		if e.ValueFrom != nil && !fromSecret && e.ValueFrom.FieldRef == nil {
			t.Errorf("env %s comes from something other than a Secret or the pod's fields: %+v", e.Name, e.ValueFrom)
		}
	}

	if overlay == "team" {
		// Continuations are forwarded to the replica that holds the call:
		// each must advertise an address the others reach.
		ip := env["POD_IP"].ValueFrom
		if ip == nil || ip.FieldRef == nil || ip.FieldRef.FieldPath != "status.podIP" || env["SWITCHBOARD_ADVERTISE_URL"].Value != "http://$(POD_IP):8080" ||
			slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_IP" }) > slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "SWITCHBOARD_ADVERTISE_URL" }) {
			t.Error("team: SWITCHBOARD_ADVERTISE_URL is not http://$(POD_IP):8080 with POD_IP from status.podIP defined before it")
		}
	}

	// The configuration: the ConfigMap mounted where --config points, JSON,
	// with settings.store only in the team overlay and only as references,
	// each of them an environment variable of the container.
	configFile := flags["--config"]
	m := mountOf(c.VolumeMounts, configFile)
	if m == nil || volumes[m.Name].ConfigMap == nil || volumes[m.Name].ConfigMap.Name != cm.Name {
		t.Fatalf("--config %q is not in a volume of the ConfigMap %s", configFile, cm.Name)
	}
	data, ok := cm.Data[strings.TrimPrefix(configFile, m.MountPath+"/")]
	if !ok {
		t.Fatalf("ConfigMap %s has no key for %s (keys: %v)", cm.Name, configFile, mapKeys(cm.Data))
	}
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Settings   struct {
			Store *struct {
				Postgres string `json:"postgres"`
				Key      string `json:"key"`
			} `json:"store"`
		} `json:"settings"`
	}
	if err := json.Unmarshal([]byte(data), &cfg); err != nil {
		t.Fatalf("config.json of ConfigMap %s: %v", cm.Name, err)
	}
	switch overlay {
	case "team":
		if s := cfg.Settings.Store; s == nil || s.Postgres != "${DATABASE_URL}" || s.Key != "${SWITCHBOARD_STORE_KEY}" {
			t.Errorf("team: settings.store is %+v, want postgres ${DATABASE_URL}, key ${SWITCHBOARD_STORE_KEY}", s)
		}
	default:
		if cfg.Settings.Store != nil {
			t.Errorf("%s: settings.store is set: only the team overlay shares state in PostgreSQL", overlay)
		}
	}
	var refEnv []string
	for _, ref := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(data, -1) {
		if _, ok := env[ref[1]]; !ok {
			t.Errorf("config.json refers to ${%s}, which the container's env does not set", ref[1])
		}
		refEnv = append(refEnv, ref[1]+"=stand-in")
	}
	validateConfig(t, data, refEnv)

	// Replicas and the autoscaler.
	hpas := count[autoscalingv2.HorizontalPodAutoscaler](objs)
	switch overlay {
	case "single":
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || hpas != 0 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("single: want 1 replica, no HorizontalPodAutoscaler and the Recreate strategy (one writer of the SQLite files)")
		}
	case "team":
		h := one[autoscalingv2.HorizontalPodAutoscaler](t, objs)
		if ref := h.Spec.ScaleTargetRef; ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
			t.Errorf("the HorizontalPodAutoscaler targets %+v, not the Deployment %s", ref, d.Name)
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 || h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != 3 || h.Spec.MaxReplicas < 3 {
			t.Errorf("team: want 3 replicas and an autoscaler from 3, got %s and %s-%d", show(d.Spec.Replicas), show(h.Spec.MinReplicas), h.Spec.MaxReplicas)
		}
		cpu := false
		for _, mt := range h.Spec.Metrics {
			cpu = cpu || (mt.Resource != nil && mt.Resource.Name == corev1.ResourceCPU)
		}
		if !cpu || c.Resources.Requests.Cpu().IsZero() {
			t.Error("team: the autoscaler does not scale on CPU against a CPU request")
		}
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().Cmp(*c.Resources.Requests.Memory()) < 0 {
		t.Errorf("memory request %v and limit %v: want a request, and a limit above it", c.Resources.Requests.Memory(), c.Resources.Limits.Memory())
	}
}

func TestExamples(t *testing.T) {
	files, err := filepath.Glob("k8s/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, err := decodeStrict(doc)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if ing, ok := o.value.(*networkingv1.Ingress); ok {
			// Not the session id: the initialize that opens a session has none.
			if ing.Annotations["nginx.ingress.kubernetes.io/upstream-hash-by"] != "$binary_remote_addr" {
				t.Errorf("%s: the ingress does not keep a client on one pod", f)
			}
			for _, r := range ing.Spec.Rules {
				for _, p := range r.HTTP.Paths {
					if b := p.Backend.Service; b == nil || b.Name != "switchboard" || b.Port.Name != "http" {
						t.Errorf("%s: backend %+v is not the switchboard Service's port http", f, p.Backend)
					}
				}
			}
		}
	}
}

// TestStrictDecodingFails proves the checks above can fail: a typo in a
// field, an unknown kind and a value of the wrong type are errors, both
// decoded alone and built by kustomize.
func TestStrictDecodingFails(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 3\n", `unknown field "spec.replica"`},
		{"misplaced field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{port: 80, targetport: http}]\n", `unknown field "spec.ports[0].targetport"`},
		{"unknown kind", "apiVersion: v1\nkind: Servce\nmetadata: {name: x}\n", `unknown kind "Servce"`},
		{"wrong type", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: x}\nspec:\n  selector: app\n", "cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeStrict([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decodeStrict: err %v, want one containing %q", err, tc.want)
			}
			fsys := filesys.MakeFsInMemory()
			must(t, fsys.WriteFile("/k/kustomization.yaml", []byte("resources: [x.yaml]\n")))
			must(t, fsys.WriteFile("/k/x.yaml", []byte(tc.doc)))
			if _, err := build(fsys, "/k"); err == nil {
				t.Error("build: no error")
			}
		})
	}
	// A typo in a patch of an overlay reaches the built Deployment.
	fsys := filesys.MakeFsInMemory()
	for _, f := range []string{"kustomization.yaml", "deployment.yaml", "service.yaml", "pdb.yaml", "hpa.yaml", "config.json"} {
		data, err := os.ReadFile(filepath.Join("k8s/base", f))
		must(t, err)
		must(t, fsys.WriteFile("/k8s/base/"+f, data))
	}
	must(t, fsys.WriteFile("/k8s/o/kustomization.yaml", []byte("resources: [../base]\npatches: [{path: p.yaml}]\n")))
	must(t, fsys.WriteFile("/k8s/o/p.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: switchboard}\nspec:\n  template:\n    spec:\n      terminationGracePeriodSecond: 60\n")))
	if _, err := build(fsys, "/k8s/o"); err == nil || !strings.Contains(err.Error(), "terminationGracePeriodSecond") {
		t.Errorf("build of an overlay with a typo in a patch: err %v, want one naming the field", err)
	}
	if _, err := build(fsys, "/k8s/base"); err != nil {
		t.Errorf("the same base without the patch: %v", err)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// switchboardBinary builds cmd/switchboard once for the package's tests.
func switchboardBinary(t *testing.T) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "switchboard-deploy-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "switchboard")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/switchboard")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/switchboard: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// TestMain removes the binary switchboardBinary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// validateConfig checks config.json as switchboard reads it (strict: an
// unknown or misplaced field is an error at file:line), alone: no user or
// project file, the variables it refers to set to stand-ins.
func validateConfig(t *testing.T, data string, env []string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.json")
	must(t, os.WriteFile(file, []byte(data), 0o600))
	cmd := exec.Command(switchboardBinary(t), "config", "validate", "--config", file)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + dir, "XDG_CONFIG_HOME=" + dir + "/config", "XDG_STATE_HOME=" + dir + "/state",
		"XDG_CACHE_HOME=" + dir + "/cache", "PATH=" + os.Getenv("PATH")}, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("switchboard config validate of the ConfigMap's config.json: %v\n%s", err, out)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// parseArgs returns serve's flags and their values ("" for a bool flag).
func parseArgs(t *testing.T, args []string) map[string]string {
	t.Helper()
	flags := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--stateless", "--admin":
			flags[a] = ""
		case "--http", "--token-file", "--config", "--log-level", "--log-file":
			if i+1 == len(args) {
				t.Fatalf("args %q: %s has no value", args, a)
			}
			flags[a] = args[i+1]
			i++
		default:
			t.Fatalf("args %q: unknown flag %q of serve", args, a)
		}
	}
	return flags
}

// port resolves a port number or name against the container's named ports.
func port(named map[string]int32, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	return named[p.StrVal]
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// mountOf returns the mount that holds path, the deepest one.
func mountOf(mounts []corev1.VolumeMount, path string) *corev1.VolumeMount {
	var best *corev1.VolumeMount
	for i, m := range mounts {
		if (path == m.MountPath || strings.HasPrefix(path, m.MountPath+"/")) && (best == nil || len(m.MountPath) > len(best.MountPath)) {
			best = &mounts[i]
		}
	}
	return best
}

// sources counts the sources a volume names (a volume must name one).
func sources(s corev1.VolumeSource) int {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return len(m)
}

func mapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// show prints what a pointer points to, or "unset".
func show[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
