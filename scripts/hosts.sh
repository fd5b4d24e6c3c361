#!/usr/bin/env bash
# Hosts on one machine: network namespaces that rdmx sees as separate machines (issue 40's test bed).
#
#   hosts.sh up N [--rate RATE]   N hosts rdmx-h1..rdmx-hN, host i at 10.77.0.(i+1)/24, each joined by a veth pair
#                                 to one bridge that lives in a namespace of its own (rdmx-hub): their traffic
#                                 never touches the machine's own interfaces. --rate (tc tbf, e.g. 10gbit) shapes
#                                 each host's egress. Removes any earlier test bed first.
#   hosts.sh down                 removes every rdmx-h* namespace and the hub (their veths go with them)
#   hosts.sh run I CMD...         runs CMD inside host I (ip netns exec); RDMX_HOST_ADDR is its address
#   hosts.sh addr I               prints host I's address
#   hosts.sh ls                   lists the hosts and their addresses
#   hosts.sh with N [--rate R] -- CMD...   up, CMD (on this host, using `run`), then down, also when CMD fails or
#                                 this script is interrupted or terminated (a SIGKILL leaves the namespaces: the
#                                 next `up` or `down` removes them)
#
# Needs root and `ip netns` (iproute2) with veth and bridge support; refuses clearly where that is missing.
# Processes in two hosts are different machines to rdmx: no shared loopback, no common local address, so the
# `auto` provider chooses tcp between them (shm stays the choice inside one host).
set -euo pipefail

PREFIX=rdmx-h
HUB=rdmx-hub
NET=10.77.0

die() {
  echo "hosts: $*" >&2
  exit 1
}

need() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces and veth pairs); run it as root or with sudo"
  command -v ip >/dev/null || die "needs iproute2's 'ip' (apt-get install iproute2)"
  if ! ip netns list >/dev/null 2>&1; then
    die "network namespaces are not available here ('ip netns list' fails: a container without CAP_SYS_ADMIN?)"
  fi
}

hosts() {
  { ip netns list 2>/dev/null || true; } | awk '{print $1}' | { grep -E "^${PREFIX}[0-9]+$" || true; } | sort -V
}

down() {
  need
  local h
  for h in $(hosts); do
    ip netns del "$h" 2>/dev/null || true
  done
  if ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$HUB"; then
    ip netns del "$HUB" 2>/dev/null || true
  fi
}

addr() {
  echo "$NET.$(( $1 + 1 ))"
}

up() {
  local n="$1" rate="${2:-}"
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "host count '$n' must be 1..200"
  need
  down
  # a half-built test bed is removed, whatever failed
  trap 'echo "hosts: setting up failed; removing what was made" >&2; down' ERR
  ip netns add "$HUB"
  ip -n "$HUB" link set lo up
  ip -n "$HUB" link add br0 type bridge
  ip -n "$HUB" link set br0 up
  local i h
  for i in $(seq 1 "$n"); do
    h="$PREFIX$i"
    ip netns add "$h"
    ip -n "$h" link set lo up
    # one end is the host's eth0, the other a port of the hub's bridge; created inside the host namespace, so
    # nothing appears in the machine's own namespace even for a moment
    ip -n "$h" link add eth0 type veth peer name "p$i" netns "$HUB"
    ip -n "$h" addr add "$(addr "$i")/24" dev eth0
    ip -n "$h" link set eth0 up
    ip -n "$HUB" link set "p$i" master br0
    ip -n "$HUB" link set "p$i" up
    if [ -n "$rate" ]; then
      ip netns exec "$h" tc qdisc add dev eth0 root tbf rate "$rate" burst 4mb latency 50ms \
        || die "tc tbf rate $rate failed on $h (is sch_tbf available?)"
    fi
  done
  trap - ERR
  # hosts reach each other before anyone uses them (a bridge port starts forwarding at once: no STP here)
  if [ "$n" -ge 2 ] && command -v ping >/dev/null; then
    ip netns exec "${PREFIX}1" ping -c 1 -W 5 "$(addr 2)" >/dev/null \
      || { down; die "host 1 cannot reach host 2 over the bridge"; }
  fi
  echo "hosts: $n up (${PREFIX}1..${PREFIX}$n at $(addr 1)..$(addr "$n"))${rate:+, each shaped to $rate}"
}

run() {
  local i="$1"
  shift
  need
  hosts | grep -qx "$PREFIX$i" || die "no host $i (hosts: $(hosts | tr '\n' ' ')); run: hosts.sh up N"
  RDMX_HOST_ADDR="$(addr "$i")" exec ip netns exec "$PREFIX$i" "$@"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  up)
    n="${1:?usage: hosts.sh up N [--rate RATE]}"
    shift
    rate=""
    if [ "${1:-}" = --rate ]; then rate="${2:?--rate needs a rate, e.g. 10gbit}"; fi
    up "$n" "$rate" ;;
  down)
    down
    echo "hosts: down" ;;
  run)
    i="${1:?usage: hosts.sh run I CMD...}"
    shift
    [ $# -gt 0 ] || die "usage: hosts.sh run I CMD..."
    run "$i" "$@" ;;
  addr)
    addr "${1:?usage: hosts.sh addr I}" ;;
  ls)
    need
    for h in $(hosts); do
      echo "$h $(addr "${h#"$PREFIX"}")"
    done ;;
  with)
    n="${1:?usage: hosts.sh with N [--rate RATE] -- CMD...}"
    shift
    rate=""
    if [ "${1:-}" = --rate ]; then rate="${2:?--rate needs a rate}"; shift 2; fi
    [ "${1:-}" = -- ] || die "usage: hosts.sh with N [--rate RATE] -- CMD..."
    shift
    child=""
    trap 'down' EXIT
    # the command runs as a child this shell waits for: a signal interrupts the wait (not a foreground command's
    # run), stops the child, and the EXIT trap removes the namespaces
    trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true; exit 130' INT
    trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true; exit 143' TERM
    up "$n" "$rate"
    "$@" &
    child=$!
    rc=0
    wait "$child" || rc=$?
    exit "$rc" ;;
  *)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "$cmd" ] || exit 2 ;;
esac
