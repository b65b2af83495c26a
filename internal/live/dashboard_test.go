package live

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const dockerDir = "../../docker"

// Every query of the Grafana dashboard names series the registry exposes, so a renamed
// metric cannot leave a dashboard panel silently empty.
func TestDashboardQueriesNameExposedSeries(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(dockerDir, "grafana/shardbench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title      string `json:"title"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}

	reg := New(Info{Version: "v", Scenario: "s", Backend: "cassandra"}, []string{"a"}, []string{"op"})
	reg.SetDispatch(time.Millisecond)
	feed(t, reg, 0, 1, 5)
	var text bytes.Buffer
	reg.Write(&text, Text)
	exposed := map[string]bool{}
	for _, line := range strings.Split(text.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			exposed[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
		}
	}

	names := regexp.MustCompile(`\b(shardbench_[a-z_]+|process_[a-z_]+)\b`)
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
		if len(p.Targets) > 0 && p.Datasource.UID != "prometheus" {
			t.Errorf("panel %q uses data source %q, not the provisioned prometheus", p.Title, p.Datasource.UID)
		}
	}
	for _, v := range dash.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	if len(exprs) < 10 {
		t.Fatalf("only %d queries in the dashboard", len(exprs))
	}
	for _, e := range exprs {
		found := names.FindAllString(e, -1)
		if len(found) == 0 {
			t.Errorf("query %q names no shardbench series", e)
		}
		for _, n := range found {
			if !exposed[n] {
				t.Errorf("query %q names %s, which /metrics does not expose", e, n)
			}
		}
	}

	ds, err := os.ReadFile(filepath.Join(dockerDir, "grafana/provisioning/datasources/prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ds), "uid: prometheus") {
		t.Errorf("the provisioned data source is not uid prometheus:\n%s", ds)
	}
}

// Each compose file has the monitoring profile's Prometheus and Grafana, mounting files
// that exist (docker-compose config does not check that).
func TestComposeFilesHaveMonitoring(t *testing.T) {
	for _, db := range []string{"cassandra", "mongodb"} {
		dir := filepath.Join(dockerDir, db)
		b, err := os.ReadFile(filepath.Join(dir, "docker-compose.yml"))
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Services map[string]struct {
				Profiles []string `yaml:"profiles"`
				Volumes  []string `yaml:"volumes"`
			} `yaml:"services"`
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", db, err)
		}
		for _, name := range []string{"prometheus", "grafana"} {
			s, ok := f.Services[name]
			if !ok {
				t.Errorf("%s compose file: no %s service", db, name)
				continue
			}
			if len(s.Profiles) != 1 || s.Profiles[0] != "monitoring" {
				t.Errorf("%s %s: profiles %v, want [monitoring]", db, name, s.Profiles)
			}
			for _, v := range s.Volumes {
				src, _, _ := strings.Cut(v, ":")
				if !strings.HasPrefix(src, ".") {
					continue // a named volume
				}
				if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
					t.Errorf("%s %s mounts %s: %v", db, name, src, err)
				}
			}
		}
	}
}
