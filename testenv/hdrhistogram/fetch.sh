#!/usr/bin/env bash
# Fetch the reference Java HdrHistogram (2.2.2) from Maven Central into .build, so tests can
# check that our interval logs are read by its HistogramLogProcessor. Prints the jar path.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$root/.build/hdrhistogram"
jar="$dir/HdrHistogram-2.2.2.jar"
if [[ ! -s "$jar" ]]; then
  mkdir -p "$dir"
  mvn -q -B -Dstyle.color=never dependency:copy -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2 -DoutputDirectory="$dir" >&2
fi
echo "$jar"
