#!/usr/bin/env bash
# The hosts test bed's check, run by `rdmx test` after `mvn verify` (RDMX_SKIP_HOSTS=1 skips it, saying so): the
# two-process shuffle check (io.rdmx.shuffle.ShuffleCheck, exactly-once verified by rank 0) with provider `auto`
#   1. between two hosts (network namespaces of scripts/hosts.sh): each rank must choose tcp, and say so;
#   2. inside one host: each rank must choose shm.
# Needs root (network namespaces).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=env.sh
. "$ROOT/scripts/env.sh"
HOSTS="$ROOT/scripts/hosts.sh"
WORK="$(mktemp -d /tmp/rdmx-hosts.XXXXXX)"
trap '"$HOSTS" down >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

echo "hosts-check: building shuffle and what it needs"
# installed, as the Soft-RoCE job does: the class path below resolves rdmx's own modules from the local repository
(cd "$ROOT" && $MVN -q -DskipTests install -pl shuffle -am >/dev/null)
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

"$HOSTS" up 2
pair two-hosts 1 2 tcp
pair one-host 1 1 shm
echo "hosts-check: OK"
