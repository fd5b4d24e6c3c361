#!/usr/bin/env bash
# The two-host half of the Soft-RoCE job (scripts/softroce-test.sh), run inside each of its two VMs:
#   softroce-two-hosts.sh a|b ENV_FILE
# Host 1 (role a, the job's main VM) and host 2 (role b, a second VM booted beside it) are two kernels joined by
# one virtual Ethernet link (a QEMU socket netdev), 10.9.10.1 and 10.9.10.2, each with its own rxe device on its
# own end of that link (rxe1, rxe2): rdma_cm resolves the peer's GID through a real route and every RoCE packet
# crosses the link. (Not two network namespaces of one VM: the Debian 6.1 kernel's rxe cannot be given to a
# namespace; see docs/operations.md, "Soft-RoCE between two hosts".)
# Both roles run the same steps in the same order, meeting at a barrier (files in the shared directory) after
# each; host 2 serves, host 1 drives and measures, every process with provider `auto` where rdmx chooses:
#   1. the test suite's two-node case across the hosts (io.rdmx.transport.testsuite.CrossHostCheck and
#      PeerProcess: one-sided WRITEs checked by the peer's CRC32 and READ back, messages both ways, the peer's death
#      seen by a waiting thread). (The ring channel's own two-JVM run stays on one host: the shuffle below runs on
#      ring channels, and each step costs two JVM starts, about 2 minutes in these VMs.)
#   2. the two-JVM shuffle (io.rdmx.shuffle.ShuffleCheck, exactly-once checked by rank 0);
#   3. rdmx's RPC (scripts/RpcHostsCheck.java, compiled by the job): 2000 checked 1 KiB echo calls;
#   4. alternating rounds (HOSTS_ROUNDS) of perftest (ib_write_bw, ib_write_lat, through rdma_cm: -R) and rdmx's WRITE
#      bandwidth and latency (io.rdmx.verbs.tools.WritePerf server/client: one JVM each, started once and
#      connected before the first round, measuring when told to: a JVM takes minutes to start here), host 1 to
#      host 2;
#   5. the conformance, READ conformance and RPC suites, unchanged, between two devices of host 1 on two links to
#      host 2, every packet through host 2 (see that step).
# Writes its outputs (NAME.txt, NAME.rc) into $WORK/hosts; the job checks them after the VMs end. Every wait and
# every process is bounded.
#
# The link between the two TCG VMs is slow and drops packets (perftest's ib_write_bw moved 1.4 MB/s over it, one
# run): the amounts here are sized for it (HOSTS_* in softroce-test.sh), and every rdmx JVM's queue pairs use
# perftest's default ACK timeout, 14 (67 ms; rdmx.verbs.ackTimeout), not rdma_cm's 0.5 s: with rdma_cm's, rdmx's
# WRITE bandwidth over this link was 0.35 MB/s, and a round of 2000 WRITEs took over 5 minutes. (The installed
# perftest, 4.5+0.17, leaves rdma_cm's timeout on its -R queue pairs: docs/operations.md.)
set -u
role="$1"
# shellcheck disable=SC1090
. "$2"
JOPTS="$JOPTS -Drdmx.verbs.ackTimeout=14"
H="$WORK/hosts"
mkdir -p "$H"
cd "$H"
if [ "$role" = a ]; then me=1; peer=2; mac="$MAC_A"; else me=2; peer=1; mac="$MAC_B"; fi
ME="10.9.10.$me"
PEER="10.9.10.$peer"
step() { echo "$(date +%T) host $me: $*" >> "progress_$me.txt"; }
# wait_for FILE SECONDS: whether FILE appeared within SECONDS
wait_for() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    [ -e "$1" ] && return 0
    sleep 0.2
  done
  step "gave up waiting $2 s for $1"
  return 1
}
# barrier NAME: both hosts have finished the step NAME (or the other one is gone: 300 s)
barrier() {
  touch "at_$1_$me"
  wait_for "at_$1_$peer" 300 || true
}
# java NAME TIMEOUT ARGS...: a JVM, its output in NAME.txt, its exit code in NAME.rc
run_java() {
  local name="$1" bound="$2"
  shift 2
  # shellcheck disable=SC2086
  timeout -k 10 "$bound" "$JAVA" $JOPTS "$@" > "$name.txt" 2>&1
  echo $? > "$name.rc"
}

step "up: setting up rxe$me on the link"
modprobe rdma_rxe
modprobe rdma_ucm
modprobe ib_uverbs
nic=""
for d in /sys/class/net/*; do
  [ "$(cat "$d/address")" = "$mac" ] && nic="${d##*/}"
done
if [ -z "$nic" ]; then
  step "no network interface has the link's address $mac: $(ls /sys/class/net | tr '\n' ' ')"
  exit 1
fi
ip link set lo up
ip addr add "$ME/24" dev "$nic"
ip link set "$nic" up
rdma link add "rxe$me" type rxe netdev "$nic"
ulimit -l unlimited
ibv_devices > "devices_$me.txt" 2>&1
ibv_devinfo -v -d "rxe$me" 2>&1 | grep -E "hca_id|state|GID" > "gids_$me.txt"
ip addr show dev "$nic" > "link_$me.txt"
touch "ready_$me"
# host 2 waits while host 1 runs the job's one-host steps first
if ! wait_for "ready_$peer" "$PEER_WAIT"; then
  exit 1
fi
busybox ping -c 2 -W 10 "$PEER" > "ping_$me.txt" 2>&1
echo $? > "ping_$me.rc"
rdma statistic show link "rxe$me/1" > "stats_before_$me.txt" 2>&1
cat "/sys/class/net/$nic/statistics/rx_bytes" > "rx_before_$me.txt"
barrier up

# LINKS_ONLY=1 (RDMX_SOFTROCE_ONLY=links, for developers): step 5 alone
if [ "${LINKS_ONLY:-0}" != 1 ]; then
step "two-node case of the test suite (auto): WRITEs checked by the peer, then the peer's death"
# TwoProcessTest's case (io.rdmx.transport.testsuite.CrossHostCheck against PeerProcess): host 2's peer prints its
# address into the shared directory, host 1 connects, writes and asks, then tells the peer to halt (exit 3) and
# must see its death on a waiting thread
if [ "$role" = b ]; then
  run_java twonode_peer 420 -cp "$CP" io.rdmx.transport.testsuite.PeerProcess auto twonode-peer 400
else
  run_java twonode 420 -cp "$CP" io.rdmx.transport.testsuite.CrossHostCheck auto "$H/twonode_peer.txt" \
    twonode-peer 400
fi
barrier twonode

step "shuffle (auto, 2 processes x 2 workers)"
members=10.9.10.1:7600,10.9.10.2:7601
run_java "shuffle_$((me - 1))" 420 -Dorg.slf4j.simpleLogger.log.io.rdmx.shuffle=info -cp "$CP" \
  io.rdmx.shuffle.ShuffleCheck auto $((me - 1)) "$members" 50000 hosts-verbs 300
barrier shuffle

step "rpc (auto, 2000 calls of 1 KiB)"
if [ "$role" = b ]; then
  # the server lives as long as its standard input: until host 1 says the client is done (or 230 s)
  RDMX_HOST_ADDR="$ME" timeout -k 10 420 "$JAVA" $JOPTS -cp "$RPC_CP" RpcHostsCheck server 7700 auto \
    < <(wait_for rpc_done 410; true) > rpc_server.txt 2>&1
  echo $? > rpc_server.rc
else
  for ((i = 0; i < 900; i++)); do
    grep -q '^SERVING' rpc_server.txt 2>/dev/null && break
    [ -e rpc_server.rc ] && break
    sleep 0.2
  done
  RDMX_HOST_ADDR="$ME" run_java rpc_client 420 -cp "$RPC_CP" RpcHostsCheck client "$PEER:7700" 2000 auto
  touch rpc_done
fi
barrier rpc

# perftest (over rdma_cm, -R: the GID resolved through the route) and rdmx alternate, three rounds each: the TCG
# VMs' speed drifts, so each side gets the same moments. rdmx's pair is up and connected before the first round
step "rdmx WritePerf pair: starting, connecting"
# the latency warm-up: 2000 round trips, not the one-host 20 000 (a round trip across the link took about 3 ms in
# the first full run, where ib_write_lat's typical was 2975 us: 20 000 would take a minute or more)
HOSTS_WARM=2000
gate="$H/perf_gate"
mkdir -p "$gate"
if [ "$role" = b ]; then
  run_java perf_server 1500 -cp "$CP" io.rdmx.verbs.tools.WritePerf server "$H/perf.addr" "$HOSTS_ROUNDS" \
    "$BW_SIZE" "$LAT_SIZE" "$LAT_N" "$HOSTS_WARM" &
  perf=$!
else
  run_java perf 1500 -cp "$CP" io.rdmx.verbs.tools.WritePerf client "$H/perf.addr" "$gate" "$HOSTS_ROUNDS" \
    "$BW_SIZE" "$HOSTS_BW_N" "$LAT_SIZE" "$LAT_N" "$HOSTS_WARM" &
  perf=$!
  for ((i = 0; i < 3000; i++)); do
    [ -e "$gate/connected" ] && break
    kill -0 "$perf" 2>/dev/null || break
    sleep 0.2
  done
fi
barrier perf_up
for ((r = 1; r <= HOSTS_ROUNDS; r++)); do
  step "round $r: perftest ib_write_bw / ib_write_lat"
  for t in bw lat; do
    tool=ib_write_bw size=$BW_SIZE n=$HOSTS_BW_N
    [ "$t" = bw ] || { tool=ib_write_lat size=$LAT_SIZE n=$LAT_N; }
    if [ "$role" = b ]; then
      timeout 120 "$tool" -d "rxe$me" -R -s "$size" -n "$n" > "${t}_server_$r.txt" 2>&1 &
      server=$!
      sleep 2
      touch "${t}_ready_$r"
      wait "$server"
      echo $? > "${t}_server_$r.rc"
    else
      wait_for "${t}_ready_$r" 150 || true
      # the server may take a moment longer to listen in a slow VM: a refused connection is tried again
      for attempt in 1 2 3 4 5; do
        timeout 120 "$tool" -d "rxe$me" -R -s "$size" -n "$n" "$PEER" > "${t}_$r.txt" 2>&1 && break
        sleep 2
      done
    fi
    barrier "${t}_$r"
  done
  step "round $r: rdmx WRITE bandwidth and latency"
  if [ "$role" = a ]; then
    touch "$gate/go_$r"
    for ((i = 0; i < 1500; i++)); do
      [ -e "$gate/done_$r" ] && break
      kill -0 "$perf" 2>/dev/null || break
      sleep 0.2
    done
  fi
  barrier "perf_$r"
done
wait "$perf"
rdma statistic show link "rxe$me/1" > "stats_after_$me.txt" 2>&1
cat "/sys/class/net/$nic/statistics/rx_bytes" > "rx_after_$me.txt"
ibv_devices > "devices_end_$me.txt" 2>&1
fi

# 5. the suites across the links (last: it changes host 1's routes). Host 1 gets a second device, rxe3, on a
# second link to host 2 (10.9.11.1 and 10.9.11.2); host 1's policy routes send what one of its two link addresses
# sends to the other out to host 2, which forwards it back in on the other link. The conformance, READ
# conformance and RPC suites, unchanged, then run in one JVM of host 1 with their server-side nodes on rxe1
# (10.9.10.1) and the others on rxe3 (10.9.11.1) (io.rdmx.transport.testsuite.TwoLinks): rdma_cm resolves the
# peer's GID through a route via host 2, and every packet between the two crosses both links and host 2, which
# counts what it forwarded. (The suites build both nodes of each case in one JVM and look into both; a host
# cannot be split, so the route is.)
step "suites across the links: conformance, READ conformance and RPC on verbs, rxe3 to rxe1 through host 2"
[ "$role" = a ] && mac2="$MAC_A2" || mac2="$MAC_B2"
nic2=""
for d in /sys/class/net/*; do
  [ "$(cat "$d/address")" = "$mac2" ] && nic2="${d##*/}"
done
# forwarded datagrams (/proc/net/snmp, Ip: ForwDatagrams)
forwarded() { awk '/^Ip:/ {n++; for (i = 1; i <= NF; i++) if (n == 1) k[i] = $i; else if (k[i] == "ForwDatagrams") print $i}' /proc/net/snmp; }
if [ -z "$nic2" ]; then
  step "no network interface has the second link's address $mac2: $(ls /sys/class/net | tr '\n' ' ')"
  touch "links_ready_$me" suites_done
elif [ "$role" = b ]; then
  ip addr add 10.9.11.2/24 dev "$nic2"
  ip link set "$nic2" up
  sysctl -qw net.ipv4.ip_forward=1
  for c in all default "$nic" "$nic2"; do sysctl -qw "net.ipv4.conf.$c.rp_filter=0"; done
  forwarded > forw_before_2.txt
  touch links_ready_2
  wait_for suites_done 1100 || true
  forwarded > forw_after_2.txt
else
  ip addr add 10.9.11.1/24 dev "$nic2"
  ip link set "$nic2" up
  rdma link add rxe3 type rxe netdev "$nic2"
  for c in all default "$nic" "$nic2"; do
    sysctl -qw "net.ipv4.conf.$c.rp_filter=0" "net.ipv4.conf.$c.accept_local=1"
  done
  ip route add 10.9.10.1 via 10.9.11.2 dev "$nic2" src 10.9.11.1 onlink table 101
  ip route add 10.9.11.1 via 10.9.10.2 dev "$nic" src 10.9.10.1 onlink table 102
  # what comes in on either link is for this host (the local table first); everything else to the other
  # address, locally sent or a lookup with no input device, goes through host 2: rdma_cm checks an incoming
  # connection request's path so (validate_net_dev: the route back to its source must leave by the device it came
  # in on), and with these rules it does, out through host 2 by the same link
  ip rule add pref 5 iif "$nic" table local
  ip rule add pref 6 iif "$nic2" table local
  ip rule add pref 10 to 10.9.10.1 table 101
  ip rule add pref 11 to 10.9.11.1 table 102
  ip rule add pref 100 table local
  ip rule del pref 0
  { ip rule show; ip route get 10.9.10.1 from 10.9.11.1; ip route get 10.9.11.1 from 10.9.10.1
    ip route get 10.9.10.1 from 10.9.11.1 iif "$nic"; } > routes_1.txt 2>&1
  wait_for links_ready_2 300 || true
  busybox ping -c 2 -W 10 -I 10.9.11.1 10.9.10.1 > ping_links.txt 2>&1
  echo $? > ping_links.rc
  sel="--select-class=io.rdmx.verbs.VerbsConformanceTest --select-class=io.rdmx.verbs.VerbsReadConformanceTest"
  sel="${LINKS_SELECT:-$sel --select-class=io.rdmx.verbs.VerbsRpcTest}"
  rdma statistic show link rxe3/1 > stats_links_before_3.txt 2>&1
  rdma statistic show link rxe1/1 > stats_links_before_1.txt 2>&1
  # past the bound the JVM gets SIGQUIT first (its threads' stacks go to suites.txt: a hang shows where), then KILL
  # shellcheck disable=SC2086
  timeout -k 20 -s QUIT 1000 "$JAVA" $JOPTS -Drdmx.test.twoLinks=10.9.10.1,10.9.11.1 -cp "$CP" \
    org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors --details=tree \
    --reports-dir="$H/junit-links" $sel > suites.txt 2>&1
  echo $? > suites.rc
  rdma statistic show link rxe3/1 > stats_links_after_3.txt 2>&1
  rdma statistic show link rxe1/1 > stats_links_after_1.txt 2>&1
  touch suites_done
fi
barrier suites
step "done"
echo ok > "done_$me"
