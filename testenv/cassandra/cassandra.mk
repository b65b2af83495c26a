# Local Apache Cassandra for tests and benchmarks. Include from the top Makefile:
#
#   include testenv/cassandra/cassandra.mk
#
# Targets (all idempotent; downloads and node data live under .build/):
#   cassandra-fetch         cassandra-all 5.0.x + dependencies -> .build/cassandra/<v>/lib
#   cassandra-up            start 1 node  (127.0.0.1:9042)
#   cassandra-up3           start 3 nodes (127.0.0.1-3:9042, dc1, racks rack1-3)
#   cassandra-down          stop every node (SIGTERM, then SIGKILL after a timeout)
#   cassandra-status        which nodes are up
#   cassandra-clean         stop, then delete node data (CASSANDRA_BASE_DIR)
#   cassandra-stress-fetch  cassandra-stress (4.0-alpha2 tarball) -> .build/cassandra-stress
#
# Settings come from the environment (CASSANDRA_VERSION, CASSANDRA_HEAP, ...): see
# testenv/cassandra/common.sh. In a recipe that runs tests against the cluster, stop it even
# when the tests fail, e.g.
#   $(MAKE) cassandra-up3 && { go test ./...; rc=$$?; $(MAKE) cassandra-down; exit $$rc; }

CASSANDRA_TESTENV := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))

.PHONY: cassandra-fetch cassandra-up cassandra-up3 cassandra-down cassandra-status \
	cassandra-clean cassandra-stress-fetch

cassandra-fetch:
	$(CASSANDRA_TESTENV)/fetch.sh

cassandra-up:
	$(CASSANDRA_TESTENV)/start.sh 1

cassandra-up3:
	$(CASSANDRA_TESTENV)/start.sh 3

cassandra-down:
	$(CASSANDRA_TESTENV)/stop.sh

cassandra-status:
	$(CASSANDRA_TESTENV)/status.sh

cassandra-clean:
	$(CASSANDRA_TESTENV)/stop.sh --clean

cassandra-stress-fetch:
	$(CASSANDRA_TESTENV)/fetch.sh --stress
