package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// blackFridayNames are the 14 design variants of scenarios/black-friday.yaml.
var blackFridayNames = []string{"seed000", "seed001-mongo", "seed001-mongo-orders-geo-created", "seed001-mongo-orders-created",
	"seed001-mongo-orders-id-hashed", "seed001-mongo-products-category", "seed001-mongo-products-id-hashed", "seed001-mongo-products-brand",
	"seed001-mongo-products-subcategory", "seed001-cassandra", "seed002", "seed002-products-category", "seed003", "seed004"}

// fourteenDir is the simulated fixture with its variants repeated under the 14 names
// of Black Friday: the verdict's tables at their real height and name lengths.
func fourteenDir(t testing.TB) string {
	dir := simDir(t)
	var sum map[string]any
	readJSON(t, filepath.Join(dir, results.SummaryFile), &sum)
	hs, err := results.ReadHotspots(dir)
	if err != nil {
		t.Fatal(err)
	}
	vs := sum["variants"].([]any)
	var out []any
	var hot []results.HotspotsVariant
	for i, name := range blackFridayNames {
		v := map[string]any{}
		b, _ := json.Marshal(vs[i%len(vs)])
		json.Unmarshal(b, &v)
		v["name"] = name
		out = append(out, v)
		h := hs.Variant(v2name(vs[i%len(vs)]))
		hc := *h
		hc.Variant = name
		hot = append(hot, hc)
	}
	sum["variants"] = out
	writeJSON(t, filepath.Join(dir, results.SummaryFile), sum)
	hs.Variants = hot
	writeJSON(t, filepath.Join(dir, results.HotspotsFile), hs)
	os.Remove(filepath.Join(dir, results.GateFile))
	os.Remove(filepath.Join(dir, results.ServerFile))
	return dir
}

func v2name(v any) string { return v.(map[string]any)["name"].(string) }

func readJSON(t testing.TB, path string, v any) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t testing.TB, path string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The report of a run opens with the verdict, and verdict.json holds the same ranking.
func TestReportOpensWithVerdict(t *testing.T) {
	dir := fourteenDir(t)
	out, err := Render(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(out.HTML)
	html := string(page)
	v, err := results.ReadVerdict(dir)
	if err != nil || v == nil {
		t.Fatalf("verdict.json: %v", err)
	}
	if len(v.Overall) != 14 {
		t.Fatalf("verdict.json ranks %d variants", len(v.Overall))
	}
	iv, ir := strings.Index(html, `<section id="verdict">`), strings.Index(html, `<section id="run">`)
	rank := strings.Index(html, `<table class="verdict">`)
	if iv < 0 || rank < iv || rank > ir {
		t.Fatalf("the ranking is not the first thing in the page (verdict %d, ranking %d, run %d)", iv, rank, ir)
	}
	// The page's overall table lists the variants in verdict.json's order.
	ranking := html[rank : strings.Index(html[rank:], "</table>")+rank]
	last := 0
	for _, r := range v.Overall {
		i := strings.Index(ranking, `</span>`+r.Variant+`</th>`)
		if i < last {
			t.Errorf("%s (rank %d) is out of order in the page", r.Variant, r.Rank)
		}
		last = i
		if !strings.Contains(ranking, r.Reason[:min(len(r.Reason), 40)]) {
			t.Errorf("the page lacks %s's reason %q", r.Variant, r.Reason)
		}
	}
	for _, e := range []string{"sessions", "carts", "views", "orders", "products"} {
		if !strings.Contains(html, "<caption>"+e+": the variants that serve it") {
			t.Errorf("no ranking for %s", e)
		}
	}
}

// The verdict page in headless Chromium with the 14 variants of Black Friday: no table
// wider than its box (on a desktop none wider than the page), no text under 12px, no
// page overflow on a phone; the screenshot is kept with SHARDBENCH_SCREENSHOT_DIR.
func TestBrowserVerdictPage(t *testing.T) {
	bin := chromiumBin(t)
	out, err := Render(fourteenDir(t), Options{Out: filepath.Join(t.TempDir(), "v")})
	if err != nil {
		t.Fatal(err)
	}
	br := startBrowser(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, c := range []struct {
		name          string
		width, height int
		mobile        bool
	}{{"verdict-desktop", 1280, 900, false}, {"verdict-phone", 390, 844, true}} {
		t.Run(c.name, func(t *testing.T) {
			pr, err := br.load(ctx, out.HTML, c.width, c.height, c.mobile, 3000)
			if err != nil {
				t.Fatalf("%v\n%s", err, br.stderr.String())
			}
			if pr.ScrollW > pr.InnerW+1 {
				t.Errorf("the page is %dpx wide in a %dpx viewport", pr.ScrollW, pr.InnerW)
			}
			if pr.SmallText > 0 {
				t.Errorf("%d table cells render under 12px", pr.SmallText)
			}
			if !c.mobile {
				var verdict []string
				for _, w := range pr.WideTables {
					if !strings.Contains(w, "the variants that serve it") && !strings.HasPrefix(w, "Overall") && !strings.HasPrefix(w, "Each seed claim") {
						continue
					}
					verdict = append(verdict, w)
				}
				if len(verdict) > 0 {
					t.Errorf("verdict tables wider than the page: %s", fmt.Sprint(verdict))
				}
			}
			checkScreenshot(t, pr.Screenshot, c.width, c.name)
		})
	}
}
