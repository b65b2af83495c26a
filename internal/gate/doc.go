// Package gate turns a results directory into a CI verdict: threshold rules from a
// scenario's slo section or a --gate file, and comparisons with a baseline run. It reads
// only the results directory (summary.json with its embedded histograms, hotspots.json),
// so any old run can be gated again.
//
// # Rules
//
// A rule is one line, SUBJECT METRIC COMPARATOR THRESHOLD, e.g.
//
//	carts.add_item p99 < 15ms
//	"carts.* service.p99.9 <= 40ms"
//	all error_rate < 0.1%
//	table:orders_by_period hottest_share < 30%
//	nodes@mongo-* imbalance < 1.3
//
// SUBJECT is an operation, a pattern of operations (`*`, `carts.*`, each matching
// operation is checked on its own), `all` (the variant's totals), `table:PATTERN` or
// `nodes`, optionally followed by `@VARIANT-PATTERN` (default: every variant). See
// docs/gates.md for every metric.
//
// Ties: `<` and `>` are strict, so a value equal to the threshold fails them; `<=` and
// `>=` pass it. Values are compared exactly as recorded: a latency percentile is the
// histogram's value at that percentile (HdrHistogram's highest equivalent value, 3
// significant digits), in nanoseconds against the threshold in nanoseconds.
//
// Absent subjects fail loudly: an operation, variant or table that a rule names but the
// results do not hold is a FAIL naming what is there (a typo must never pass silently),
// and so is a pattern that matches nothing or a latency rule on an operation that never
// completed.
//
// # Small samples
//
// A percentile is judged only when the sample holds at least 10 values expected beyond
// it: n ≥ 10/(1−p), so p50 needs 20 values, p99 1,000, p99.9 10,000 and p99.99 100,000.
// Below that a check is SKIP "insufficient sample" — except that a threshold rule
// (`<`, `<=`) still FAILS when so many values already lie beyond the threshold that the
// SLO cannot hold: k values at or above it out of n, with P(Binomial(n, 1−p) ≥ k) <
// 0.001. A small sample can prove a violation, never compliance.
//
// # Baselines: distributions, not one number
//
// `--baseline OLD` compares every (variant, operation) present in both runs, plus each
// variant's totals, in two ways on the exact histograms embedded in summary.json:
//
//  1. The percentile spectrum (p50, p90, p99, p99.9, p99.99). For each percentile judged
//     by the small-sample rule in both runs, a distribution-free 99% confidence interval
//     comes from order statistics (ranks np ± 2.576·√(np(1−p)), read off the
//     histogram). A percentile regresses when the new run's lower bound exceeds the old
//     run's upper bound stretched by the tolerance: lo_new > hi_old × (1+tolerance). A
//     difference beyond the tolerance whose intervals overlap is reported as noise.
//  2. The whole distribution: a one-sided Mann–Whitney U test (is the new run
//     stochastically slower?) on the histogram bucket counts, with ties (values in the
//     same 0.1% bucket) corrected for, and the Hodges–Lehmann estimate of the typical
//     slowdown factor (median of all pairwise new/old ratios, computed on the buckets by
//     bisection). It fails when p < 0.001 and that factor exceeds 1+tolerance.
//
// Why Mann–Whitney rather than Kolmogorov–Smirnov: both are distribution-free and work
// on bucket counts, but KS answers "do the shapes differ at all", which with 10^5 values
// is almost always yes for two runs of a real database, and offers no effect size in the
// units of the tolerance. Mann–Whitney tests the question a regression gate asks (is a
// random request now slower than before?) and pairs with the Hodges–Lehmann factor,
// which the tolerance bounds directly. KS, most sensitive near the median, would also
// miss tail regressions; those are the spectrum's job, where each percentile carries its
// own interval. Requiring both significance and an effect beyond the tolerance keeps
// noise-level differences (another seed, the same system) from failing a build while a
// real shift fails it.
//
// Error rates compare by an exact conditional binomial test (given the errors of both
// runs, is the new share of them improbably large? p < 0.001) plus the tolerance;
// throughput (achieved/target) and hot-partition figures (hottest share, node imbalance)
// by the tolerance alone.
package gate
