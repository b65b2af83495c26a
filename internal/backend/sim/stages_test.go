package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// A hot partition's replicas saturate their read stage while the other nodes' stay idle
// and every write stage is idle: server.json's nodes list shows it stage by stage, with
// when each stage first saturated.
func TestServerNodesShowTheSaturatedStage(t *testing.T) {
	sc := writeScenario(t, `
name: hot-reads
seed: 9
load:
  arrival: uniform
  max_in_flight: 4096
  timeout: 2s
  phases:
    - {name: calm, type: constant, rate: 1000, duration: 4s}
    - {name: rush, type: constant, rate: 6000, duration: 4s}
population:
  users: 10000
  products: 20000
  categories: {electronics: 70, appliances: 10, accessories: 8, clothing: 5, home: 4, books: 3}
mix:
  catalog.category_listing: 1
backends:
  sim:
    cluster:
      dcs: [{name: dc1, nodes: 6, racks: 3}]
    cassandra: {cores: 2, read: 500us}
designs:
  - design: DESIGNS/seed004.yaml
`)
	s, _ := simulate(t, sc, "seed004", 1<<30)
	var top results.PartitionLoad
	for _, tb := range result(s).Tables {
		if strings.HasSuffix(tb.Table, ".products_by_category") {
			top = tb.Top[0]
		}
	}
	// Seed 004 is Cassandra and MongoDB: 6 nodes, then 3 shards of 3 members.
	var nodes []results.ServerNode
	for _, n := range s.serverView().Nodes {
		if n.Shard == "" {
			nodes = append(nodes, n)
		} else if len(n.Stages) != 1 || n.Stages[0].Stage != "member" || !strings.HasPrefix(n.Node, n.Shard+"-m") {
			t.Errorf("MongoDB member %s of %q: stages %+v", n.Node, n.Shard, n.Stages)
		}
	}
	if len(nodes) != 6 || len(top.Replicas) == 0 {
		t.Fatalf("%d Cassandra nodes in server.json, hottest partition %+v", len(nodes), top)
	}
	saturated := 0
	for _, n := range nodes {
		if len(n.Stages) != 2 || n.Stages[0].Stage != "read" || n.Stages[1].Stage != "write" {
			t.Fatalf("%s: stages %+v, want read and write", n.Node, n.Stages)
		}
		read, write := n.Stages[0], n.Stages[1]
		if write.PeakUtilisation >= results.SaturatedAt || write.SaturatedS > 0 {
			t.Errorf("%s: write stage saturated (%+v) with no writes offered", n.Node, write)
		}
		if n.Requests != read.Requests+write.Requests || read.Workers != 2 {
			t.Errorf("%s: requests %d, stages %+v", n.Node, n.Requests, n.Stages)
		}
		hot := slices.Contains(top.Replicas, n.Node)
		sat := read.FirstSaturatedS != nil
		if sat {
			saturated++
			if *read.FirstSaturatedS <= 4 || read.SaturatedS <= 0 || read.PeakUtilisation < results.SaturatedAt {
				t.Errorf("%s: read stage saturated at %.0fs for %.0fs (peak %.2f); the rush starts at 4s", n.Node, *read.FirstSaturatedS, read.SaturatedS, read.PeakUtilisation)
			}
		}
		if sat && !hot {
			t.Errorf("%s saturated but holds no replica of %s (%v)", n.Node, top.Key, top.Replicas)
		}
		t.Logf("%s hot=%v read peak %.2f mean %.2f saturated %.0fs queue %.1f", n.Node, hot, read.PeakUtilisation, read.MeanUtilisation, read.SaturatedS, read.PeakQueue)
	}
	if saturated == 0 {
		t.Errorf("no read stage saturated at 6000/s with 70%% on %s", top.Key)
	}
}
