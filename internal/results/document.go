package results

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// docKind is one kind of JSON document a results directory holds beside the summary
// (hotspots.json, server.json, analysis.json, gate.json, capacity.json, verdict.json,
// fidelity.json): its file name, the schema name it is written with, the newest version
// this build reads (0: any) and the size limit it is read under.
type docKind struct {
	file    string
	schema  string
	version int
	input   inputfile.Kind
}

// header is the part of every document read before the rest: its schema and version.
type header struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
}

// readDoc loads one document of kind k from the results directory dir into a new T; it
// returns (nil, nil) when the directory has none. Errors name the file and say whether
// the schema or the version is not one this build reads.
func readDoc[T any](dir string, k docKind) (*T, error) {
	path := filepath.Join(dir, k.file)
	b, err := inputfile.ReadFile(path, k.input)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, unreadable(err)
	}
	var h header
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, unreadable(jsonError(path, b, err))
	}
	if h.Schema != k.schema {
		return nil, unreadablef("%s: schema %s is not %q", path, quoteShort(h.Schema), k.schema)
	}
	if k.version > 0 && h.Version > k.version {
		return nil, unreadablef("%s: version %d is newer than this shardbench reads (%d): upgrade shardbench",
			path, h.Version, k.version)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, unreadable(jsonError(path, b, err))
	}
	return &v, nil
}
