#!/usr/bin/env bash
# Run cassandra-stress (from the apache-cassandra 4.0-alpha2 binary tarball, the newest one
# Maven Central serves) on Java 17 against Cassandra 5.0. Fetches it on first use
# (fetch.sh --stress). All arguments go to cassandra-stress, e.g.
#
#   testenv/cassandra/stress.sh write n=100000 -rate threads=64 -node 127.0.0.1
#   testenv/cassandra/stress.sh write duration=20s -rate threads=128 -node 127.0.0.1
#
# The tarball's own tools/bin/cassandra-stress script only knows Java 8/11; this wrapper
# starts the same main class with the Java 17 module flags instead. Extra JVM options:
# STRESS_JVM_OPTS (e.g. "-Xmx2G").
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
home="$CASS_ROOT/.build/cassandra-stress/apache-cassandra-4.0-alpha2"
[[ -f "$CASS_ROOT/.build/cassandra-stress/.fetched-4.0-alpha2" ]] ||
  "$CASS_ROOT/testenv/cassandra/fetch.sh" --stress >/dev/null
mkdir -p "$home/data"
# shellcheck disable=SC2206 # word splitting of the user's extra options is intended
extra=(${STRESS_JVM_OPTS:-})
exec java -server -Xmx1G "${extra[@]}" -Djdk.attach.allowAttachSelf=true \
  "${CASSANDRA_JAVA17_FLAGS[@]}" \
  -cp "$home/conf:$home/tools/lib/*:$home/lib/*" \
  -Dcassandra.storagedir="$home/data" \
  -Dlogback.configurationFile=logback-tools.xml \
  org.apache.cassandra.stress.Stress "$@"
