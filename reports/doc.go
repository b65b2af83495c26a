// Package reports renders a results directory (or several, side by side) as an HTML page
// with PNG charts. Reports read only the results directory — summary.json,
// timeseries.jsonl, hotspots.json, gate.json, server.json and the presence of
// scenario.yaml — so any old run re-renders.
//
// Output, in Options.Out (default: the results directory itself):
//
//	report.html      one page, no JavaScript, no network fetches, html/template escaped
//	charts/*.png     the charts, referenced by relative paths (or embedded as data: URIs
//	                 with Options.Embed, then no charts/ directory is written)
//
// PNGs beside the page are the default: CI systems archive the directory as it is, the
// HTML stays small enough to diff and to open on a phone, and every chart is also a file
// one can paste into a ticket. Embed gives a single file to mail around (a third larger).
//
// Chart count is kept sensible for big scenarios: per-operation latency charts for the
// MaxOpCharts busiest operations, per-variant hot-partition charts for the
// MaxVariantCharts variants with the worst node imbalance; every figure of every
// operation and variant is still in the tables, and the report says what it left out.
package reports
