#!/usr/bin/env bash
# Which JDK ran which tests: sums the surefire reports (those written after the file $1, if given) per module
# and per java.version, as recorded by the forked JVM that ran them.
#   usage: test-jdks.sh [marker-file]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
marker="${1:-}"

reports() {
  local f
  for f in "$ROOT"/*/target/surefire-reports*/TEST-*.xml; do
    [ -f "$f" ] || continue
    if [ -z "$marker" ] || [ "$f" -nt "$marker" ]; then echo "$f"; fi
  done
}

attr() { grep -o " $1=\"[0-9]*\"" <<<"$2" | grep -o '[0-9]*' || echo 0; }

echo "rdmx: tests by JDK (java.version of the JVM that ran them, from this run's surefire reports):"
if [ -z "$(reports)" ]; then
  echo "  (none)"
  exit 0
fi
reports | while read -r f; do
  module=${f#"$ROOT"/}
  module=${module%%/*}
  # a report without properties (a class skipped as a whole, e.g. the Hadoop tests on JDK 23+) has no java.version
  version=$({ grep -o '<property name="java.version" value="[^"]*"' "$f" || true; } | head -1 \
    | sed 's/.*value="//; s/"$//')
  suite=$({ grep -o '<testsuite [^>]*>' "$f" || true; } | head -1)
  echo "$module ${version:-not-recorded} $(attr tests "$suite") $(attr failures "$suite") $(attr errors "$suite")" \
    "$(attr skipped "$suite")"
done | awk '
  { k = $1 " " $2; if (!(k in t)) order[n++] = k; t[k] += $3; f[k] += $4; e[k] += $5; s[k] += $6 }
  END {
    for (i = 0; i < n; i++) {
      k = order[i]; split(k, p, " ")
      printf "  %-10s Java %-10s %4d tests, %d failures, %d errors, %d skipped\n", p[1], p[2], t[k], f[k], e[k], s[k]
    }
  }'
