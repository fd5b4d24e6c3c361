#!/usr/bin/env bash
# The distribution built by `mvn install`/`verify` (dist/target/rdmx-<version>/): its launcher runs `info` on
# the build JDK and on a JDK 17 (where the verbs provider must show as unusable with the Java it needs, not
# break the others), and `doctor --provider shm` must pass. Run by `scripts/rdmx test`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=env.sh
. "$ROOT/scripts/env.sh"
dist=$(ls -d "$ROOT"/dist/target/rdmx-*/rdmx-*/ 2>/dev/null | head -1)
if [ -z "$dist" ] || [ ! -x "$dist/bin/rdmx" ]; then
  echo "dist-smoke: no distribution under dist/target (run mvn package first)" >&2
  exit 1
fi
check() {
  local label="$1" home="$2" out
  if ! out=$(JAVA_HOME="$home" "$dist/bin/rdmx" info 2>&1); then
    echo "dist-smoke: FAILED: bin/rdmx info on $label"; echo "$out"; exit 1
  fi
  grep -Eq '^  shm +usable' <<<"$out" || { echo "dist-smoke: FAILED: shm not usable on $label"; echo "$out"; exit 1; }
  if ls "$dist"/lib/rdmx-verbs-*.jar >/dev/null 2>&1; then
    grep -Eq '^  verbs ' <<<"$out" || { echo "dist-smoke: FAILED: verbs not listed on $label"; echo "$out"; exit 1; }
  fi
  if ! out=$(JAVA_HOME="$home" "$dist/bin/rdmx" doctor --provider shm 2>&1); then
    echo "dist-smoke: FAILED: bin/rdmx doctor --provider shm on $label"; echo "$out"; exit 1
  fi
  echo "dist-smoke: $dist on $label: info and doctor --provider shm OK"
}
check "Java $RDMX_JAVA_FEATURE" "$JAVA_HOME"
if [ "$RDMX_JAVA_FEATURE" != 17 ] && [ "${RDMX_SKIP_JDK17:-0}" != 1 ]; then
  check "Java 17" "$(rdmx_jdk17)"
fi
