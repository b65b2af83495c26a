// Package kubernetes holds the manifests of a distributed shardbench run on Kubernetes,
// and this test, which checks them without a cluster: every manifest decodes strictly
// into the Kubernetes API types (an unknown or misspelt field fails), and the manifests
// agree with one another and with the repository (what the Jobs refer to exists, the
// shard count is the same everywhere, the scenario ConfigMap holds the repository's
// files). It is a module of its own so that shardbench's go.mod does not carry the
// Kubernetes API; `make test` runs it. (The shardbench command lines in the Jobs are
// checked against the CLI by cmd/shardbench's tests.)
package kubernetes

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// manifests is every Kubernetes object in this folder, by kind and name.
type manifests struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	claims     map[string]*corev1.PersistentVolumeClaim
	jobs       map[string]*batchv1.Job
}

// notManifests are YAML files here that are not Kubernetes objects.
var notManifests = map[string]bool{"black-friday-cassandra.yaml": true}

func load(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := &manifests{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		claims: map[string]*corev1.PersistentVolumeClaim{}, jobs: map[string]*batchv1.Job{}}
	for _, f := range files {
		if notManifests[f] {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\n---") {
			t.Errorf("%s: one object a file", f)
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(b, &head); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		strict := func(v interface{ GetName() string }) string {
			if err := yaml.UnmarshalStrict(b, v); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			return v.GetName()
		}
		switch head.APIVersion + " " + head.Kind {
		case "v1 ConfigMap":
			o := &corev1.ConfigMap{}
			m.configMaps[strict(o)] = o
		case "v1 Secret":
			o := &corev1.Secret{}
			m.secrets[strict(o)] = o
		case "v1 PersistentVolumeClaim":
			o := &corev1.PersistentVolumeClaim{}
			m.claims[strict(o)] = o
		case "batch/v1 Job":
			o := &batchv1.Job{}
			m.jobs[strict(o)] = o
		default:
			t.Errorf("%s: unexpected %s %s", f, head.APIVersion, head.Kind)
		}
	}
	for _, want := range []string{"shardbench-setup", "shardbench-shards", "shardbench-merge"} {
		if m.jobs[want] == nil {
			t.Fatalf("no Job %s", want)
		}
	}
	if m.configMaps["shardbench-run"] == nil || m.configMaps["shardbench-scenario"] == nil {
		t.Fatal("the ConfigMaps shardbench-run and shardbench-scenario are missing")
	}
	return m
}

// Strict decoding catches what a typo would otherwise let through: an unknown field
// fails, as it does in kubectl's server-side validation.
func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	b, err := os.ReadFile("shards-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "completionMode: Indexed", "completionMode: Indexed\n  parallelizm: 4", 1)
	if err := yaml.UnmarshalStrict([]byte(bad), &batchv1.Job{}); err == nil || !strings.Contains(err.Error(), "parallelizm") {
		t.Errorf("an unknown field decoded: %v", err)
	}
}

func TestManifestsDecodeAndAgree(t *testing.T) {
	m := load(t)
	run := m.configMaps["shardbench-run"].Data
	shards, err := strconv.Atoi(run["SHARDS"])
	if err != nil || shards < 2 {
		t.Fatalf("shardbench-run SHARDS %q: want a shard count of 2 or more", run["SHARDS"])
	}
	if _, err := time.Parse(time.RFC3339, run["START_AT"]); err != nil {
		t.Errorf("shardbench-run START_AT %q: %v", run["START_AT"], err)
	}
	for _, k := range []string{"RUN_ID", "TARGET"} {
		if run[k] == "" {
			t.Errorf("shardbench-run has no %s", k)
		}
	}

	// The shards: an Indexed Job, every shard at once, no retries.
	sj := m.jobs["shardbench-shards"]
	spec := sj.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Error("shardbench-shards is not an Indexed Job")
	}
	if spec.Completions == nil || int(*spec.Completions) != shards || spec.Parallelism == nil || int(*spec.Parallelism) != shards {
		t.Errorf("shardbench-shards: completions %v, parallelism %v; SHARDS is %d (every shard runs at once)", deref(spec.Completions), deref(spec.Parallelism), shards)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Error("shardbench-shards must not retry a shard (backoffLimit: 0)")
	}
	shard := onlyContainer(t, sj)
	for _, want := range []string{"--shards $(SHARDS)", "--start-at $(START_AT)", "--out /results/$(RUN_ID)/shard-$(JOB_COMPLETION_INDEX)"} {
		if !strings.Contains(strings.Join(shard.Args, " "), want) {
			t.Errorf("the shard's arguments lack %q: %v", want, shard.Args)
		}
	}
	if r := shard.Resources.Requests; r.Cpu().IsZero() || r.Memory().IsZero() || shard.Resources.Limits.Memory().IsZero() {
		t.Errorf("the shard must request CPU and memory and limit memory: %+v", shard.Resources)
	}

	// The merge: every shard's directory, once, in order.
	mj := m.jobs["shardbench-merge"]
	var merge *corev1.Container
	for i := range mj.Spec.Template.Spec.InitContainers {
		if c := &mj.Spec.Template.Spec.InitContainers[i]; c.Name == "merge" {
			merge = c
		}
	}
	if merge == nil {
		t.Fatal("shardbench-merge has no merge init container")
	}
	var dirs []string
	for _, a := range merge.Args[1:] {
		if strings.HasPrefix(a, "/results/$(RUN_ID)/shard-") {
			dirs = append(dirs, a)
		}
	}
	var want []string
	for i := range shards {
		want = append(want, "/results/$(RUN_ID)/shard-"+strconv.Itoa(i))
	}
	if !slices.Equal(dirs, want) {
		t.Errorf("merge lists %v, want the %d shards' directories %v", dirs, shards, want)
	}
	if gate := mj.Spec.Template.Spec.Containers; len(gate) != 1 || gate[0].Args[0] != "gate" {
		t.Errorf("shardbench-merge must end with the gate: %v", gate)
	}

	// Every Job: one image, references that exist, variables that are defined.
	var image string
	ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	for name, j := range m.jobs {
		ps := j.Spec.Template.Spec
		if ps.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %q, want Never (a restarted shard would start late and rewrite its results)", name, ps.RestartPolicy)
		}
		if ps.SecurityContext == nil || ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
			t.Errorf("%s: pods must run as non-root", name)
		}
		volumes := map[string]corev1.Volume{}
		for _, v := range ps.Volumes {
			volumes[v.Name] = v
			switch {
			case v.ConfigMap != nil && m.configMaps[v.ConfigMap.Name] == nil:
				t.Errorf("%s: volume %s: no ConfigMap %s", name, v.Name, v.ConfigMap.Name)
			case v.Secret != nil:
				s := m.secrets[v.Secret.SecretName]
				if s == nil {
					t.Errorf("%s: volume %s: no Secret %s", name, v.Name, v.Secret.SecretName)
					continue
				}
				for _, it := range v.Secret.Items {
					if _, ok := s.StringData[it.Key]; !ok {
						t.Errorf("%s: volume %s: Secret %s has no key %s", name, v.Name, s.Name, it.Key)
					}
				}
			case v.PersistentVolumeClaim != nil:
				c := m.claims[v.PersistentVolumeClaim.ClaimName]
				if c == nil {
					t.Errorf("%s: volume %s: no claim %s", name, v.Name, v.PersistentVolumeClaim.ClaimName)
				} else if !slices.Contains(c.Spec.AccessModes, corev1.ReadWriteMany) {
					t.Errorf("claim %s must be ReadWriteMany: shards on several nodes write it at once", c.Name)
				}
			}
		}
		for _, c := range slices.Concat(ps.InitContainers, ps.Containers) {
			if image == "" {
				image = c.Image
			}
			if c.Image != image {
				t.Errorf("%s/%s runs %s, the others %s: every step must run one build (merge refuses shards of different builds)", name, c.Name, c.Image, image)
			}
			defined := map[string]bool{}
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef == nil || m.configMaps[e.ConfigMapRef.Name] == nil {
					t.Errorf("%s/%s: envFrom a ConfigMap that is not here", name, c.Name)
					continue
				}
				for k := range m.configMaps[e.ConfigMapRef.Name].Data {
					defined[k] = true
				}
			}
			for _, e := range c.Env {
				defined[e.Name] = true
				if s := e.ValueFrom; s != nil && s.SecretKeyRef != nil {
					if sec := m.secrets[s.SecretKeyRef.Name]; sec == nil || sec.StringData[s.SecretKeyRef.Key] == "" {
						t.Errorf("%s/%s: env %s from Secret %s key %s, which is not here", name, c.Name, e.Name, s.SecretKeyRef.Name, s.SecretKeyRef.Key)
					}
				}
				if strings.HasSuffix(e.Name, "_PASSWORD_FILE") && !mounted(c, volumes, e.Value) {
					t.Errorf("%s/%s: %s=%s is not a mounted Secret file", name, c.Name, e.Name, e.Value)
				}
			}
			if name == "shardbench-shards" {
				defined["JOB_COMPLETION_INDEX"] = true // set by the Job controller in Indexed Jobs
			}
			for _, a := range c.Args {
				for _, v := range ref.FindAllStringSubmatch(a, -1) {
					if !defined[v[1]] {
						t.Errorf("%s/%s: argument %q refers to $(%s), which the container does not define", name, c.Name, a, v[1])
					}
				}
			}
			for _, vm := range c.VolumeMounts {
				if _, ok := volumes[vm.Name]; !ok {
					t.Errorf("%s/%s: mounts volume %s, which the pod does not have", name, c.Name, vm.Name)
				}
			}
			if c.Resources.Requests.Memory().IsZero() {
				t.Errorf("%s/%s requests no memory", name, c.Name)
			}
		}
	}
	if image == "" {
		t.Error("no container image")
	}
}

// The scenario ConfigMap holds exactly the files it is generated from
// (scenario-configmap.sh): the scenario here and the repository's designs.
func TestScenarioConfigMapHoldsTheRepositoryFiles(t *testing.T) {
	m := load(t)
	data := m.configMaps["shardbench-scenario"].Data
	if _, ok := data["scenario.yaml"]; !ok {
		t.Fatal("shardbench-scenario has no scenario.yaml")
	}
	regen := "docker/kubernetes/scenario-configmap.sh docker/kubernetes/black-friday-cassandra.yaml scenarios/designs/... > docker/kubernetes/scenario-configmap.yaml"
	for key, body := range data {
		src := filepath.Join("..", "..", "scenarios", "designs", key)
		if key == "scenario.yaml" {
			src = "black-friday-cassandra.yaml"
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Errorf("shardbench-scenario key %s: %v", key, err)
			continue
		}
		if string(b) != body {
			t.Errorf("shardbench-scenario key %s differs from %s: regenerate it (%s)", key, src, regen)
		}
	}
	// Every design the scenario names is in the ConfigMap, beside it.
	for _, line := range strings.Split(data["scenario.yaml"], "\n") {
		if _, d, ok := strings.Cut(strings.TrimSpace(line), "- design: "); ok {
			if _, ok := data[d]; !ok || strings.Contains(d, "/") {
				t.Errorf("the scenario names design %q: the ConfigMap must hold it under that name, without a folder", d)
			}
		}
	}
}

func onlyContainer(t *testing.T, j *batchv1.Job) corev1.Container {
	t.Helper()
	cs := j.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%s: %d containers, want 1", j.Name, len(cs))
	}
	return cs[0]
}

// mounted says whether path is a file of a Secret volume the container mounts.
func mounted(c corev1.Container, volumes map[string]corev1.Volume, path string) bool {
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok || v.Secret == nil {
			continue
		}
		for _, it := range v.Secret.Items {
			if filepath.Join(vm.MountPath, it.Path) == path {
				return true
			}
		}
	}
	return false
}

func deref(p *int32) any {
	if p == nil {
		return "unset"
	}
	return *p
}
