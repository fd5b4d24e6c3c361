#!/usr/bin/env bash
# Runs the jcstress tests and fails unless every test passed (jcstress's own exit code is not relied on).
# usage: run.sh <java> <jcstress.jar> <mode> <results-dir> [iterations per fork, default: the mode's]
set -uo pipefail
java="$1"; jar="$2"; mode="$3"; out="$4"; iters=()
[ -z "${5:-}" ] || iters=(-iters "$5")
mkdir -p "$out"
cd "$(dirname "$jar")"   # jcstress drops its binary results in the working directory
log="$out/console.log"
"$java" -jar "$jar" -m "$mode" "${iters[@]}" -r "$out" -jvmArgsPrepend "--enable-native-access=ALL-UNNAMED" 2>&1 | tee "$log" | grep -E '^\(Results:|FAILED|ERROR' | tail -3
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ] || ! grep -q 'Failed tests: No matches.' "$log" || ! grep -q 'Error tests: No matches.' "$log"; then
  echo "jcstress: FAILURES (exit $rc); report: $out/index.html"
  sed -n '/RUN RESULTS:/,$p' "$log"
  exit 1
fi
echo "jcstress: all tests passed (mode $mode${5:+, $5 iterations}); report: $out/index.html"
