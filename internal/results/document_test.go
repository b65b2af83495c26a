package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every document kind goes through one read and one write: each round-trips with its
// schema stamped, and a file of another kind under its name is refused as unreadable,
// naming the file.
func TestDocumentsRoundTrip(t *testing.T) {
	dir := At(t.TempDir())
	cases := []struct {
		file  string
		write func() error
		read  func() (any, error)
	}{
		{HotspotsFile, func() error { return dir.WriteHotspots(&Hotspots{}) }, func() (any, error) { return ReadHotspots(dir.Path) }},
		{ServerFile, func() error { return dir.WriteServer(&ServerReport{}) }, func() (any, error) { return ReadServer(dir.Path) }},
		{AnalysisFile, func() error { return dir.WriteAnalysis(&Analysis{}) }, func() (any, error) { return ReadAnalysis(dir.Path) }},
		{GateFile, func() error { return dir.WriteGate(&GateReport{}) }, func() (any, error) { return ReadGate(dir.Path) }},
		{CapacityFile, func() error { return dir.WriteCapacity(&Capacity{}) }, func() (any, error) { return ReadCapacity(dir.Path) }},
		{VerdictFile, func() error { return dir.WriteVerdict(&Verdict{}) }, func() (any, error) { return ReadVerdict(dir.Path) }},
		{FidelityFile, func() error { return dir.WriteFidelity(&Fidelity{}) }, func() (any, error) { return ReadFidelity(dir.Path) }},
	}
	for _, c := range cases {
		if v, err := c.read(); err != nil || !isNilPtr(v) {
			t.Errorf("%s absent: got %v, %v; want nil, nil", c.file, v, err)
		}
		if err := c.write(); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if v, err := c.read(); err != nil || isNilPtr(v) {
			t.Errorf("%s: read back %v, %v", c.file, v, err)
		}
		path := filepath.Join(dir.Path, c.file)
		if err := os.WriteFile(path, []byte(`{"schema": "shardbench.other", "version": 1}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := c.read()
		if err == nil || !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s with another schema: %v", c.file, err)
		}
	}
}

func isNilPtr(v any) bool {
	switch p := v.(type) {
	case *Hotspots:
		return p == nil
	case *ServerReport:
		return p == nil
	case *Analysis:
		return p == nil
	case *GateReport:
		return p == nil
	case *Capacity:
		return p == nil
	case *Verdict:
		return p == nil
	case *Fidelity:
		return p == nil
	}
	return false
}
