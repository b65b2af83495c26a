#!/usr/bin/env bash
# One-shot initialisation of the sharded cluster in docker-compose.yml (run by its "init"
# service, inside a mongo:7.0 container, after every mongod is healthy):
#   1. initiate the replica sets cfgrs (config server), shard1 and shard2 (idempotent);
#   2. wait until each has a writable primary;
#   3. start a temporary mongos inside this container, register shard1 and shard2 through it
#      (the registration lives on the config servers), check listShards, stop that mongos.
# The real mongos starts only after this exits 0, so when it is healthy the cluster is ready.
set -euo pipefail

TIMEOUT="${INIT_TIMEOUT:-180}"
log() { printf '[init %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# js HOST:PORT CODE: run JavaScript with mongosh, print its output.
js() { mongosh --quiet --norc "mongodb://$1/?directConnection=true" --eval "$2"; }

# initiate HOST:PORT CONFIG_JSON: rs.initiate unless the set is initiated already.
initiate() {
  local seed="$1" cfg="$2"
  js "$seed" "
    let st;
    try { st = rs.status(); } catch (e) { st = e; }
    if (st.ok === 1) { print('already initiated: ' + st.set); }
    else if (st.code === 94 /* NotYetInitialized */ || st.codeName === 'NotYetInitialized') {
      const r = rs.initiate($cfg);
      print('initiated: ' + JSON.stringify(r));
    } else { throw st; }
  "
}

# wait_primary NAME HOST:PORT: until the set has a writable primary.
wait_primary() {
  local name="$1" seed="$2" deadline=$((SECONDS + TIMEOUT)) p
  until p="$(js "$seed" 'const h = db.hello(); print(h.setName && h.primary ? h.primary : "")' 2>/dev/null)" && [[ -n "$p" ]]; do
    ((SECONDS < deadline)) || { log "no primary for $name within ${TIMEOUT}s"; exit 1; }
    sleep 1
  done
  log "$name primary: $p"
}

log "initiating replica sets"
initiate cfg:27019 '{_id: "cfgrs", configsvr: true, members: [{_id: 0, host: "cfg:27019"}]}'
for s in shard1 shard2; do
  initiate "$s-a:27018" "{_id: \"$s\", members: [
    {_id: 0, host: \"$s-a:27018\", priority: 2},
    {_id: 1, host: \"$s-b:27018\", priority: 1},
    {_id: 2, host: \"$s-c:27018\", priority: 1}]}"
done
wait_primary cfgrs cfg:27019
wait_primary shard1 shard1-a:27018
wait_primary shard2 shard2-a:27018

log "starting a temporary mongos to register the shards"
mongos --configdb cfgrs/cfg:27019 --port 27017 --bind_ip 127.0.0.1 --logpath /tmp/init-mongos.log &
mongos_pid=$!
trap 'kill "$mongos_pid" 2>/dev/null || true' EXIT
deadline=$((SECONDS + TIMEOUT))
until js 127.0.0.1:27017 'quit(db.adminCommand({ping: 1}).ok === 1 ? 0 : 1)' >/dev/null 2>&1; do
  kill -0 "$mongos_pid" 2>/dev/null || { tail -n 30 /tmp/init-mongos.log; log "temporary mongos exited"; exit 1; }
  ((SECONDS < deadline)) || { tail -n 30 /tmp/init-mongos.log; log "temporary mongos did not answer within ${TIMEOUT}s"; exit 1; }
  sleep 1
done

js 127.0.0.1:27017 '
  const have = db.adminCommand({listShards: 1}).shards.map(s => s._id);
  for (const s of ["shard1", "shard2"]) {
    if (have.includes(s)) { print("shard already registered: " + s); continue; }
    const r = sh.addShard(s + "/" + s + "-a:27018," + s + "-b:27018," + s + "-c:27018");
    print("added shard: " + s + " " + JSON.stringify(r.shardAdded || r));
  }
  const n = db.adminCommand({listShards: 1}).shards.length;
  if (n < 2) { throw new Error("listShards shows " + n + " shard(s), want 2"); }
  print("shards: " + n + ", balancer running: " + sh.getBalancerState());
'

kill "$mongos_pid"
wait "$mongos_pid" 2>/dev/null || true
trap - EXIT
log "cluster initialised; the mongos service starts next"
