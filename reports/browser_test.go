package reports

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/results"
)

// The browser test drives Debian's Chromium over the DevTools protocol through
// --remote-debugging-pipe (file descriptors 3 and 4, NUL-separated JSON): no TCP port, no
// websocket, no dependency. It proves "no network request" twice over:
//
//   - every request the page makes is reported by the Network domain
//     (Network.requestWillBeSent, before any DNS or connection), and each must be file: or
//     data:; a page with one remote image fails this check (TestBrowserDetectsRemoteFetch
//     shows the check is not vacuous);
//   - Chromium runs with --host-resolver-rules="MAP * ~NOTFOUND", so even a request the
//     check somehow missed could not leave the machine, and would surface as a failed load.
//
// "Every image loaded" is each <img>'s complete && naturalWidth > 0 after the load event;
// "no JavaScript required" is a page with no <script> element and no on* handler.

// chromiumFlags are the flags the issue asks for, plus the pipe and the resolver rule.
func chromiumFlags(userDataDir string) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir=" + userDataDir,
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--remote-debugging-pipe",
		"about:blank",
	}
}

// browser is a Chromium process and a DevTools connection to it.
type browser struct {
	cmd  *exec.Cmd
	w    io.WriteCloser
	r    *bufio.Reader
	mu   sync.Mutex
	next int
	// replies by id; events go to the events channel.
	pending map[int]chan cdpMessage
	events  chan cdpMessage
	done    chan struct{}
	stderr  *bytes.Buffer
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func startBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	toChrome, ourW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ourR, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{w: ourW, r: bufio.NewReaderSize(ourR, 1<<20), pending: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 4096), done: make(chan struct{}), stderr: &bytes.Buffer{}}
	b.cmd = exec.Command(bin, chromiumFlags(t.TempDir())...)
	b.cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fd 3: Chromium reads, fd 4: it writes
	b.cmd.Stderr = b.stderr
	b.cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	toChrome.Close()
	fromChrome.Close()
	go b.readLoop()
	t.Cleanup(func() {
		b.call(context.Background(), "", "Browser.close", nil)
		ourW.Close()
		wait := make(chan error, 1)
		go func() { wait <- b.cmd.Wait() }()
		select {
		case <-wait:
		case <-time.After(10 * time.Second):
			b.cmd.Process.Kill()
			<-wait
		}
		ourR.Close()
	})
	return b
}

func (b *browser) readLoop() {
	defer close(b.done)
	for {
		msg, err := b.r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(msg[:len(msg)-1], &m); err != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default: // a flood of events we do not read: drop rather than block replies
		}
	}
}

// call sends a command (to a page session when session != "") and waits for its reply.
func (b *browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if _, err := b.w.Write(append(data, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		return m.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("%s: chromium exited: %s", method, b.stderr.String())
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// pageResult is what a page load showed.
type pageResult struct {
	Requests []string // every URL the page requested
	Failed   []string // loads that failed, with the reason
	Images   []pageImage
	ScrollW  int
	InnerW   int
	Scripts  int
	Handlers int
	Title    string
	// WideTables are the tables wider than the box they sit in (caption: width > box);
	// SmallText the table cells whose text renders under 12px.
	WideTables []string
	SmallText  int
	Screenshot []byte
}

type pageImage struct {
	Src      string `json:"src"`
	Complete bool   `json:"complete"`
	W        int    `json:"w"`
	H        int    `json:"h"`
}

// load opens path in a new tab of the given viewport, waits for the load event, and
// collects requests, images and a full-page screenshot (up to maxShotH pixels tall).
func (b *browser) load(ctx context.Context, path string, width, height int, mobile bool, maxShotH int) (*pageResult, error) {
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return nil, err
	}
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	json.Unmarshal(res, &tgt)
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true})
	if err != nil {
		return nil, err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &att)
	s := att.SessionID
	defer b.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": tgt.TargetID})
	for _, c := range []struct {
		m string
		p any
	}{
		{"Network.enable", map[string]any{}},
		{"Page.enable", nil},
		{"Network.setCacheDisabled", map[string]any{"cacheDisabled": true}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}},
	} {
		if _, err := b.call(ctx, s, c.m, c.p); err != nil {
			return nil, err
		}
	}
	// Drain events of the blank page.
	for len(b.events) > 0 {
		<-b.events
	}
	u := (&url.URL{Scheme: "file", Path: path}).String()
	if _, err := b.call(ctx, s, "Page.navigate", map[string]any{"url": u}); err != nil {
		return nil, err
	}
	pr := &pageResult{}
	loaded := false
	for !loaded {
		select {
		case ev := <-b.events:
			if ev.SessionID != s {
				continue
			}
			switch ev.Method {
			case "Page.loadEventFired":
				loaded = true
			case "Network.requestWillBeSent":
				var p struct {
					Request struct {
						URL string `json:"url"`
					} `json:"request"`
				}
				json.Unmarshal(ev.Params, &p)
				pr.Requests = append(pr.Requests, p.Request.URL)
			case "Network.loadingFailed":
				var p struct {
					ErrorText string `json:"errorText"`
					Type      string `json:"type"`
				}
				json.Unmarshal(ev.Params, &p)
				pr.Failed = append(pr.Failed, p.Type+": "+p.ErrorText)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the load event: %w", ctx.Err())
		}
	}
	// Late events (failures after load) arrive shortly; collect them for a moment.
	deadline := time.After(300 * time.Millisecond)
collect:
	for {
		select {
		case ev := <-b.events:
			if ev.SessionID != s {
				continue
			}
			switch ev.Method {
			case "Network.requestWillBeSent":
				var p struct {
					Request struct {
						URL string `json:"url"`
					} `json:"request"`
				}
				json.Unmarshal(ev.Params, &p)
				pr.Requests = append(pr.Requests, p.Request.URL)
			case "Network.loadingFailed":
				var p struct {
					ErrorText string `json:"errorText"`
					Type      string `json:"type"`
				}
				json.Unmarshal(ev.Params, &p)
				pr.Failed = append(pr.Failed, p.Type+": "+p.ErrorText)
			}
		case <-deadline:
			break collect
		}
	}
	const probe = `JSON.stringify({
	  imgs: Array.from(document.images).map(i => ({src: i.currentSrc.slice(0, 120), complete: i.complete, w: i.naturalWidth, h: i.naturalHeight})),
	  scrollW: document.documentElement.scrollWidth, innerW: window.innerWidth,
	  scripts: document.scripts.length,
	  handlers: Array.from(document.querySelectorAll('*')).filter(e => Array.from(e.attributes).some(a => a.name.startsWith('on'))).length,
	  title: document.title, height: document.documentElement.scrollHeight,
	  wide: Array.from(document.querySelectorAll('table')).filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).map(t => ((t.caption || {}).textContent || t.className) + ': ' + t.scrollWidth + ' > ' + t.parentElement.clientWidth),
	  small: Array.from(document.querySelectorAll('td, th')).filter(c => parseFloat(getComputedStyle(c).fontSize) < 12).length})`
	res, err = b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": probe, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	var ev struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res, &ev); err != nil {
		return nil, err
	}
	var probeOut struct {
		Imgs     []pageImage `json:"imgs"`
		ScrollW  int         `json:"scrollW"`
		InnerW   int         `json:"innerW"`
		Scripts  int         `json:"scripts"`
		Handlers int         `json:"handlers"`
		Title    string      `json:"title"`
		Height   int         `json:"height"`
		Wide     []string    `json:"wide"`
		Small    int         `json:"small"`
	}
	if err := json.Unmarshal([]byte(ev.Result.Value), &probeOut); err != nil {
		return nil, fmt.Errorf("probe %q: %w", ev.Result.Value, err)
	}
	pr.Images, pr.ScrollW, pr.InnerW, pr.Scripts, pr.Handlers, pr.Title = probeOut.Imgs, probeOut.ScrollW, probeOut.InnerW, probeOut.Scripts, probeOut.Handlers, probeOut.Title
	pr.WideTables, pr.SmallText = probeOut.Wide, probeOut.Small
	shotH := min(max(probeOut.Height, height), maxShotH)
	res, err = b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": width, "height": shotH, "scale": 1}})
	if err != nil {
		return nil, err
	}
	var shot struct {
		Data string `json:"data"`
	}
	json.Unmarshal(res, &shot)
	pr.Screenshot, err = base64.StdEncoding.DecodeString(shot.Data)
	return pr, err
}

// offline returns the requests that were not to a local file or an inline data: URI.
func (pr *pageResult) offline() []string {
	var bad []string
	for _, u := range pr.Requests {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			bad = append(bad, u)
		}
	}
	return bad
}

// checkScreenshot decodes a screenshot and requires it to be of the expected width and
// not blank: a real page has many distinct colours and a good share of non-white pixels.
func checkScreenshot(t *testing.T, data []byte, wantW int, name string) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: screenshot does not decode: %v", name, err)
	}
	b := img.Bounds()
	if b.Dx() != wantW || b.Dy() < 200 {
		t.Errorf("%s: screenshot is %dx%d, want width %d", name, b.Dx(), b.Dy(), wantW)
	}
	colours := map[uint32]bool{}
	nonWhite, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bb, _ := img.At(x, y).RGBA()
			colours[(r>>11)<<10|(g>>11)<<5|bb>>11] = true
			if r < 0xf000 || g < 0xf000 || bb < 0xf000 {
				nonWhite++
			}
			total++
		}
	}
	if len(colours) < 50 || float64(nonWhite)/float64(total) < 0.05 {
		t.Errorf("%s: screenshot looks blank: %d colours, %.1f%% non-white", name, len(colours), 100*float64(nonWhite)/float64(total))
	}
	if dir := os.Getenv("SHARDBENCH_SCREENSHOT_DIR"); dir != "" {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, name+".png"), data, 0o644)
	}
	return img
}

func chromiumBin(t *testing.T) string {
	bin := itest.Env(t, "SHARDBENCH_CHROMIUM", "Chromium (testenv/chromium/install.sh installs it and prints its path)")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("SHARDBENCH_CHROMIUM=%s: %v", bin, err)
	}
	return bin
}

// TestBrowserOpensReports renders a simulated run (charts beside the page) and a
// comparison (charts embedded) and opens both in headless Chromium at desktop and phone
// widths: every image loads, the page requests nothing but local files, needs no
// JavaScript, does not overflow a phone's width, and its screenshot is a real page.
func TestBrowserOpensReports(t *testing.T) {
	bin := chromiumBin(t)
	sim := fixture(t, "sim")
	beside := filepath.Join(t.TempDir(), "beside")
	outA, err := Render(sim, Options{Out: beside})
	if err != nil {
		t.Fatal(err)
	}
	embedded := filepath.Join(t.TempDir(), "embedded")
	outB, err := Compare([]string{sim, fixture(t, "real")}, Options{Out: embedded, Embed: true})
	if err != nil {
		t.Fatal(err)
	}
	// A run with a key analysis: the section's wide per-collection tables must scroll in
	// their own boxes on a phone too.
	withKeys := filepath.Join(t.TempDir(), "keys")
	outC, err := Render(fixture(t, "sim-analysis"), Options{Out: withKeys})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(outC.HTML); err != nil || !strings.Contains(string(b), `<section id="keys">`) || !strings.Contains(string(b), "analyzeShardKey failed:") {
		t.Fatalf("the report with analysis.json has no key analysis section (%v)", err)
	}
	// A capacity search's page (shardbench capacity).
	capDir := filepath.Join(t.TempDir(), "capacity")
	if err := results.At(capDir).WriteCapacity(capacityFixture()); err != nil {
		t.Fatal(err)
	}
	outD, err := Render(capDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	br := startBrowser(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, c := range []struct {
		name          string
		out           *Output
		width, height int
		mobile        bool
	}{
		{"report-desktop", outA, 1280, 900, false},
		{"report-phone", outA, 390, 844, true},
		{"compare-desktop", outB, 1280, 900, false},
		{"compare-phone", outB, 390, 844, true},
		{"keys-desktop", outC, 1280, 900, false},
		{"keys-phone", outC, 390, 844, true},
		{"capacity-desktop", outD, 1280, 900, false},
		{"capacity-phone", outD, 390, 844, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			maxH := 6000
			if os.Getenv("SHARDBENCH_SCREENSHOT_DIR") != "" {
				maxH = 40000 // the whole page, to look at
			}
			pr, err := br.load(ctx, c.out.HTML, c.width, c.height, c.mobile, maxH)
			if err != nil {
				t.Fatalf("%v\n%s", err, br.stderr.String())
			}
			if bad := pr.offline(); len(bad) > 0 {
				t.Errorf("the page made network requests: %q", bad)
			}
			if len(pr.Failed) > 0 {
				t.Errorf("failed loads: %q", pr.Failed)
			}
			// The Network domain must see the page's own loads, or the check above would be
			// vacuous: the document, and every chart file when they sit beside it.
			local := 0
			for _, u := range pr.Requests {
				if strings.HasPrefix(u, "file://") && strings.Contains(u, "/"+ChartsDir+"/") {
					local++
				}
			}
			if len(pr.Requests) == 0 || (!strings.Contains(c.out.Charts[0].Src, "data:") && local < len(c.out.Charts)) {
				t.Errorf("the Network domain reported %d requests (%d chart files for %d charts): the no-network check would be vacuous", len(pr.Requests), local, len(c.out.Charts))
			}
			if len(pr.Images) != len(c.out.Charts) || len(pr.Images) == 0 {
				t.Errorf("page has %d images, the report wrote %d charts", len(pr.Images), len(c.out.Charts))
			}
			for _, im := range pr.Images {
				if !im.Complete || im.W != ChartWidth || im.H != ChartHeight {
					t.Errorf("image %s did not load: complete=%v %dx%d", im.Src, im.Complete, im.W, im.H)
				}
			}
			if pr.Scripts != 0 || pr.Handlers != 0 {
				t.Errorf("the page has %d scripts and %d elements with on* handlers; it must need no JavaScript", pr.Scripts, pr.Handlers)
			}
			if pr.ScrollW > pr.InnerW+1 {
				t.Errorf("the page is %dpx wide in a %dpx viewport: something overflows instead of scrolling in its own box", pr.ScrollW, pr.InnerW)
			}
			checkScreenshot(t, pr.Screenshot, c.width, c.name)
		})
	}
}

// TestBrowserDetectsRemoteFetch is the control: a page with a remote image and a remote
// stylesheet must fail the same checks, so the passing test above means something.
func TestBrowserDetectsRemoteFetch(t *testing.T) {
	bin := chromiumBin(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "remote.html")
	os.WriteFile(page, []byte(`<!DOCTYPE html><html><head><title>x</title><link rel="stylesheet" href="https://cdn.example.com/x.css"></head>
<body><h1>remote</h1><img src="http://example.com/chart.png" width="10" height="10"></body></html>`), 0o644)
	br := startBrowser(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pr, err := br.load(ctx, page, 800, 600, false, 600)
	if err != nil {
		t.Fatal(err)
	}
	bad := pr.offline()
	if len(bad) != 2 {
		t.Errorf("remote requests seen: %q, want the stylesheet and the image", bad)
	}
	if len(pr.Failed) == 0 {
		t.Errorf("remote loads did not fail: the host resolver rule is not in force")
	}
	if len(pr.Images) != 1 || pr.Images[0].W != 0 {
		t.Errorf("the remote image must not load: %+v", pr.Images)
	}
}
