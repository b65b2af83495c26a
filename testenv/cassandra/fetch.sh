#!/usr/bin/env bash
# Fetch Apache Cassandra from Maven Central into .build (idempotent).
#
#   fetch.sh            cassandra-all:$CASSANDRA_VERSION and its dependencies
#                       -> .build/cassandra/<version>/lib; prints that lib directory
#   fetch.sh --stress   the cassandra-stress tool (4.0-alpha2 binary tarball, the newest
#                       served by Maven Central) -> .build/cassandra-stress; prints the
#                       path of testenv/cassandra/stress.sh, which runs it on Java 17
#
# The binary tarball (apache-cassandra:<v>:tar.gz:bin) is not published for 5.x, so the
# server is assembled from cassandra-all and its dependency jars; configuration is written
# per node by start.sh. A marker file records a complete fetch; delete the version
# directory to fetch again.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

STRESS_VERSION=4.0-alpha2
STRESS_DIR="$CASS_ROOT/.build/cassandra-stress"
STRESS_HOME="$STRESS_DIR/apache-cassandra-$STRESS_VERSION"
STRESS_MARKER="$STRESS_DIR/.fetched-$STRESS_VERSION"

# Maven's output goes to stderr (stdout is the path this script prints), without colour codes.
mvn_quiet() { "$MVN" -q -B -Dstyle.color=never "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2; }

fetch_cassandra() {
  if [[ -f "$CASSANDRA_MARKER" ]]; then
    echo "$CASSANDRA_LIB"
    return
  fi
  log "fetching org.apache.cassandra:cassandra-all:$CASSANDRA_VERSION and its dependencies"
  mkdir -p "$CASSANDRA_HOME"
  local tmp
  tmp="$(mktemp -d "$CASSANDRA_HOME/.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  cat >"$tmp/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>shardbench.testenv</groupId>
  <artifactId>cassandra-server</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>$CASSANDRA_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  (cd "$tmp" && mvn_quiet dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib")
  local n
  n="$(find "$tmp/lib" -name '*.jar' | wc -l)"
  [[ -f "$tmp/lib/cassandra-all-$CASSANDRA_VERSION.jar" ]] || die "cassandra-all jar missing after fetch"
  compgen -G "$tmp/lib/jamm-*.jar" >/dev/null || die "jamm jar missing after fetch"
  rm -rf "$CASSANDRA_LIB"
  mv "$tmp/lib" "$CASSANDRA_LIB"
  printf 'cassandra-all %s\njars %s\n' "$CASSANDRA_VERSION" "$n" >"$CASSANDRA_MARKER"
  rm -rf "$tmp"
  trap - EXIT
  log "cassandra-all $CASSANDRA_VERSION: $n jars in $CASSANDRA_LIB"
  echo "$CASSANDRA_LIB"
}

fetch_stress() {
  if [[ ! -f "$STRESS_MARKER" ]]; then
    log "fetching org.apache.cassandra:apache-cassandra:$STRESS_VERSION:tar.gz:bin (cassandra-stress)"
    mkdir -p "$STRESS_DIR"
    local tmp
    tmp="$(mktemp -d "$STRESS_DIR/.tmp.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    mvn_quiet dependency:copy \
      "-Dartifact=org.apache.cassandra:apache-cassandra:$STRESS_VERSION:tar.gz:bin" \
      -DoutputDirectory="$tmp"
    tar -xzf "$tmp/apache-cassandra-$STRESS_VERSION-bin.tar.gz" -C "$tmp"
    [[ -x "$tmp/apache-cassandra-$STRESS_VERSION/tools/bin/cassandra-stress" ]] ||
      die "tools/bin/cassandra-stress missing from the tarball"
    rm -rf "$STRESS_HOME"
    mv "$tmp/apache-cassandra-$STRESS_VERSION" "$STRESS_HOME"
    rm -rf "$tmp"
    trap - EXIT
    echo "apache-cassandra $STRESS_VERSION" >"$STRESS_MARKER"
    log "cassandra-stress in $STRESS_HOME/tools/bin"
  fi
  echo "$CASS_ROOT/testenv/cassandra/stress.sh"
}

case "${1:-}" in
"") fetch_cassandra ;;
--stress) fetch_stress ;;
-h | --help) sed -n '2,13p' "$0" ;;
*) die "unknown argument '$1' (use --stress or nothing)" ;;
esac
