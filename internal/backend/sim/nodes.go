package sim

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/shardbench/shardbench/internal/results"
)

// nodesMu serialises appends to nodes.jsonl: variants are simulated in parallel.
var nodesMu sync.Mutex

// appendNodes appends one variant's per-node series to the results directory's
// nodes.jsonl.
func appendNodes(dir *results.Dir, series []NodePoint) error {
	nodesMu.Lock()
	defer nodesMu.Unlock()
	f, err := os.OpenFile(filepath.Join(dir.Path, NodesFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w)
	for i := range series {
		if err := enc.Encode(&series[i]); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadNodes loads nodes.jsonl (nil when the directory has none).
func ReadNodes(dir string) ([]NodePoint, error) {
	f, err := os.Open(filepath.Join(dir, NodesFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []NodePoint
	dec := json.NewDecoder(bufio.NewReader(f))
	for dec.More() {
		var p NodePoint
		if err := dec.Decode(&p); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}
