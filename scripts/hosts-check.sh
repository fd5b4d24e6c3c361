#!/usr/bin/env bash
# The hosts test bed's check, run by `rdmx test` after `mvn verify` (RDMX_SKIP_HOSTS=1 skips it, saying so): the
# two-process shuffle check (io.rdmx.shuffle.ShuffleCheck, exactly-once verified by rank 0) with provider `auto`
#   1. between two hosts (network namespaces of scripts/hosts.sh): each rank must choose tcp, and say so;
#   2. inside one host: each rank must choose shm;
# and rdmx's RPC (io.rdmx.rpc) between two hosts over tcp (scripts/RpcHostsCheck.java, run as a source file): a
# server in host 1, 2000 checked echo calls of 1 KiB from host 2; fails unless the server saw the calls come from
# host 2's own address and host 1's link received at least their bytes (they crossed the bridge, over tcp); and the
# test suite's two-node case between two hosts over tcp (io.rdmx.transport.testsuite.CrossHostCheck, PeerProcess).
# Needs root (network namespaces).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=env.sh
. "$ROOT/scripts/env.sh"
HOSTS="$ROOT/scripts/hosts.sh"
WORK="$(mktemp -d /tmp/rdmx-hosts.XXXXXX)"
trap '"$HOSTS" down >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

echo "hosts-check: building shuffle, rpc and what they need"
# installed, as the Soft-RoCE job does: the class paths below resolve rdmx's own modules from the local repository
(cd "$ROOT" && $MVN -q -DskipTests install -pl shuffle,rpc -am >/dev/null)
(cd "$ROOT" && $MVN -q dependency:build-classpath -pl shuffle -Dmdep.includeScope=test \
  -Dmdep.outputFile="$WORK/cp.txt" >/dev/null)
CP="$ROOT/shuffle/target/classes:$ROOT/shuffle/target/test-classes:$(cat "$WORK/cp.txt")"
JOPTS="-Xmx512m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.io.rdmx.shuffle=info"

# pair LABEL HOST_OF_RANK0 HOST_OF_RANK1 EXPECTED_PROVIDER
pair() {
  local label="$1" h0="$2" h1="$3" want="$4"
  local a0 a1
  a0="$("$HOSTS" addr "$h0")"
  a1="$("$HOSTS" addr "$h1")"
  local members="$a0:7600,$a1:7601"
  local job="hosts-$label"
  ("$HOSTS" run "$h1" timeout 180 "$JAVA" $JOPTS -cp "$CP" io.rdmx.shuffle.ShuffleCheck auto 1 "$members" 20000 \
    "$job" > "$WORK/$label-1.txt" 2>&1; echo $? > "$WORK/$label-1.rc") &
  local rc0=0
  "$HOSTS" run "$h0" timeout 180 "$JAVA" $JOPTS -cp "$CP" io.rdmx.shuffle.ShuffleCheck auto 0 "$members" 20000 \
    "$job" > "$WORK/$label-0.txt" 2>&1 || rc0=$?
  wait
  local rc1
  rc1="$(cat "$WORK/$label-1.rc")"
  local ok=1
  [ "$rc0" = 0 ] && [ "$rc1" = 0 ] || ok=0
  grep -q "^SHUFFLE OK over $want" "$WORK/$label-0.txt" || ok=0
  grep -q "^JOINED rank 0 over $want" "$WORK/$label-0.txt" || ok=0
  grep -q "^JOINED rank 1 over $want" "$WORK/$label-1.txt" || ok=0
  grep -q "over $want (auto)" "$WORK/$label-0.txt" || ok=0 # the choice is logged, naming the rank and address
  if [ "$ok" = 1 ]; then
    echo "hosts-check: $label: auto chose $want; $(grep '^SHUFFLE OK' "$WORK/$label-0.txt" | cut -c1-120)"
  else
    echo "hosts-check: $label FAILED (want $want; exit codes $rc0 / $rc1); rank 0, then rank 1:" >&2
    tail -30 "$WORK/$label-0.txt" >&2
    tail -30 "$WORK/$label-1.txt" >&2
    exit 1
  fi
}

# rpc over tcp between host 1 (server) and host 2 (client)
rpc() {
  (cd "$ROOT" && $MVN -q dependency:build-classpath -pl rpc -Dmdep.includeScope=test \
    -Dmdep.outputFile="$WORK/rpc-cp.txt" >/dev/null)
  local rcp="$ROOT/rpc/target/classes:$(cat "$WORK/rpc-cp.txt")"
  local a1 port=7700 calls=2000 rx0 rx1 ok=1
  a1="$("$HOSTS" addr 1)"
  rx0="$(ip netns exec rdmx-h1 cat /sys/class/net/eth0/statistics/rx_bytes)"
  # the server lives as long as its standard input (a fifo this shell holds open) stays open
  mkfifo "$WORK/rpc-in"
  "$HOSTS" run 1 timeout 180 "$JAVA" $JOPTS -cp "$rcp" "$ROOT/scripts/RpcHostsCheck.java" server "$port" \
    < "$WORK/rpc-in" > "$WORK/rpc-server.txt" 2>&1 &
  local server=$!
  exec 9> "$WORK/rpc-in"
  local i
  for i in $(seq 1 120); do
    grep -q '^SERVING' "$WORK/rpc-server.txt" && break
    kill -0 "$server" 2>/dev/null || break
    sleep 1
  done
  local rc=0
  "$HOSTS" run 2 timeout 180 "$JAVA" $JOPTS -cp "$rcp" "$ROOT/scripts/RpcHostsCheck.java" client "$a1:$port" \
    "$calls" > "$WORK/rpc-client.txt" 2>&1 || rc=$?
  exec 9>&-
  wait "$server" || true
  rx1="$(ip netns exec rdmx-h1 cat /sys/class/net/eth0/statistics/rx_bytes)"
  [ "$rc" = 0 ] || ok=0
  grep -q "^SERVING over tcp at $a1:$port" "$WORK/rpc-server.txt" || ok=0
  grep -q "^RPC OK over tcp: $calls calls of 1 KiB from $("$HOSTS" addr 2) to $a1:$port" "$WORK/rpc-client.txt" \
    || ok=0
  [ $((rx1 - rx0)) -ge $((calls * 1024)) ] || ok=0
  if [ "$ok" = 1 ]; then
    echo "hosts-check: rpc: $(cat "$WORK/rpc-client.txt" | grep '^RPC OK'); host 1 received $((rx1 - rx0)) bytes"
  else
    echo "hosts-check: rpc between hosts FAILED (client exit $rc; host 1 received $((rx1 - rx0)) bytes, want >=" \
      "$((calls * 1024))); server, then client:" >&2
    tail -30 "$WORK/rpc-server.txt" >&2
    tail -30 "$WORK/rpc-client.txt" >&2
    exit 1
  fi
}

# the test suite's two-node case between two hosts over tcp (io.rdmx.transport.testsuite.CrossHostCheck in host 2
# against PeerProcess in host 1): one-sided WRITEs checked by the peer's CRC32 and read back, then the peer told to
# halt (exit 3) while a thread here waits on a posted receive, which must end naming the peer
twonode() {
  local ok=1 rc=0
  "$HOSTS" run 1 timeout 180 "$JAVA" $JOPTS -cp "$CP" io.rdmx.transport.testsuite.PeerProcess auto twonode-peer 150 \
    > "$WORK/twonode-peer.txt" 2> "$WORK/twonode-peer.err" &
  local peer=$!
  "$HOSTS" run 2 timeout 180 "$JAVA" $JOPTS -cp "$CP" io.rdmx.transport.testsuite.CrossHostCheck auto \
    "$WORK/twonode-peer.txt" twonode-peer 150 > "$WORK/twonode.txt" 2>&1 || rc=$?
  local prc=0
  wait "$peer" || prc=$?
  [ "$rc" = 0 ] && [ "$prc" = 3 ] || ok=0
  grep -qx "PROVIDER tcp (auto)" "$WORK/twonode-peer.txt" || ok=0
  grep -qx "PROVIDER tcp (auto)" "$WORK/twonode.txt" || ok=0
  grep -q "^ADDRESS $("$HOSTS" addr 1):" "$WORK/twonode-peer.txt" || ok=0
  grep -q "^TWO-NODE OK over tcp" "$WORK/twonode.txt" || ok=0
  if [ "$ok" = 1 ]; then
    echo "hosts-check: two-node case: auto chose tcp; $(grep '^TWO-NODE OK' "$WORK/twonode.txt")"
  else
    echo "hosts-check: two-node case between hosts FAILED (exit $rc; the peer's $prc, should be 3); driver, then" \
      "peer:" >&2
    tail -30 "$WORK/twonode.txt" >&2
    tail -30 "$WORK/twonode-peer.txt" "$WORK/twonode-peer.err" >&2
    exit 1
  fi
}

"$HOSTS" up 2
pair two-hosts 1 2 tcp
twonode
pair one-host 1 1 shm
rpc
echo "hosts-check: OK"
