package reports

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// opRow finds an operation's row in the per-operation tables.
var opRow = regexp.MustCompile(`<tr(?: class="total")?><th scope="row">([a-z_.]+|all served operations)</th>(.*?)</tr>`)

// A results directory written before coverage (summary version 1, by shardbench at
// fb9a0b0) re-renders with the operations the design does not serve as coverage: no
// latency row, no not_supported error, "all" of the served operations.
func TestReportOfVersion1Run(t *testing.T) {
	out, html := renderHTML(t, "../internal/results/testdata/v1-sim")
	if len(out.Warnings) != 0 {
		t.Errorf("warnings %v", out.Warnings)
	}
	mustContain(t, html,
		"serves 17 of 25 operations",
		"not served by this design (",
		"17/25 · ",
		"all served operations",
		"converted on reading (summary version 1)",
	)
	mustNotContain(t, html, "not_supported")
	// Each variant's rows: an unserved operation has no figure, only its reason; no row
	// has a response-time p50 of about a microsecond (version 1's zero latency).
	unserved := map[string]bool{"catalog.popular": true, "catalog.stock_decrement": true, "views.append": true, "orders.place": true}
	rows := opRow.FindAllStringSubmatch(html, -1)
	seen := 0
	for _, m := range rows {
		cells := strings.Split(m[2], "</td>")
		if unserved[m[1]] && strings.Contains(m[2], "not served by this design") {
			seen++
			if strings.Contains(m[2], "µs") || strings.Contains(m[2], "ms<") {
				t.Errorf("%s: an unserved operation's row shows a latency: %s", m[1], m[2])
			}
			continue
		}
		// operation, kind, scheduled, completed, error rate, late, dropped, target/s, achieved/s, p50
		if len(cells) > 9 && strings.HasSuffix(cells[8], ">1µs") {
			t.Errorf("%s: p50 of 1µs: %s", m[1], m[2])
		}
	}
	if seen < 5 {
		t.Errorf("%d rows say an operation is not served, want the catalog, views and orders ones of both variants", seen)
	}
}

// The comparison of variants that serve different operations compares what they serve:
// coverage rows that win nothing, "all operations" replaced by the operations every
// variant serves, and operations fewer than two serve left out, by name.
func TestCompareCoverage(t *testing.T) {
	out, err := Compare([]string{"../internal/results/testdata/v1-sim"}, testOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	html := readFile(t, out.HTML)
	mustContain(t, html,
		`scope="rowgroup">coverage<`,
		"operations every variant serves",
		"Left out, fewer than two variants serve them: ",
		"catalog.product_read (served by seed004 only)",
		"catalog.popular (served by none)",
	)
	mustNotContain(t, html, `scope="rowgroup">all operations<`, `scope="rowgroup">operation catalog.popular<`, `scope="rowgroup">operation catalog.product_read<`)
	// The coverage rows win nothing.
	i := strings.Index(html, "operations served</th>")
	if i < 0 || strings.Contains(html[i:i+strings.Index(html[i:], "</tr>")], `class="good"`) {
		t.Errorf("a coverage row awards a win")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
