#!/usr/bin/env bash
# scripts/rdmx bench spark-pipelined: end-to-end latency of a Structured Streaming real-time-mode query (its job:
# spark43/src/it-job, a memory source of two partitions, a pipelined shuffle, a file sink) on the pyspark 4.3.0
# distribution in local-cluster[2,2,1024], Spark's pipelined manager (`streaming`) against rdmx's
# (RdmxPipelinedShuffleManager with RdmxShuffleManager) in the same run, rounds alternating who goes first
# (RDMX_PIPE_ROUNDS, default 2). Latency: from the driver's adding a row to the sink's writing it, for the rows
# of the second batch (ROWS of them, RDMX_PIPE_ROWS, default 400, ten every 20 ms), p50 and p99 in ms, the median
# over rounds. Writes bench/results/spark-pipelined.json ({name, rdmx, baseline, ratio}: ratio = baseline / rdmx,
# above 1 when rdmx's latency is lower). Expects spark43's shaded jar (mvn -pl spark43 -am package -DskipTests).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/env.sh"
ROUNDS="${RDMX_PIPE_ROUNDS:-2}"
ROWS="${RDMX_PIPE_ROWS:-400}"
for v in "$ROUNDS" "$ROWS"; do
  case "$v" in ''|*[!0-9]*|0) echo "bench spark-pipelined: $v must be a whole number >= 1" >&2; exit 2 ;; esac
done
SHADED=$(ls "$ROOT"/spark43/target/rdmx-spark-4.3-*-all.jar 2>/dev/null | head -1)
[ -n "$SHADED" ] || { echo "bench spark-pipelined: build first (mvn -pl spark43 -am package -DskipTests)" >&2; exit 1; }
SPARK_HOME=$(RDMX_PYSPARK_VERSION=4.3.0 "$ROOT/spark/scripts/pyspark-home.sh")
SPARK_JAVA=""
for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-arm64 /usr/lib/jvm/openjdk-17; do
  if [ -x "$j/bin/java" ]; then SPARK_JAVA="$j"; break; fi
done
SPARK_JAVA="${RDMX_SPARK_JAVA_HOME:-${SPARK_JAVA:-$JAVA_HOME}}"
WORK="$ROOT/spark43/target/bench-pipelined"
rm -rf "$WORK"
mkdir -p "$WORK/classes"
CP=$(ls "$SPARK_HOME"/jars/*.jar | tr '\n' ':')
"$JAVA_HOME/bin/javac" --release 17 -nowarn -d "$WORK/classes" -cp "$CP" "$ROOT"/spark43/src/it-job/rdmxit/*.java
"$JAVA_HOME/bin/jar" cf "$WORK/job.jar" -C "$WORK/classes" rdmxit
run() {  # run <manager> <round>
  local mgr=$1 round=$2 extra=() dir="$WORK/$1-$2"
  [ "$mgr" = rdmx ] && extra=(--conf spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager
    --conf spark.shuffle.manager.incremental=io.rdmx.spark.RdmxPipelinedShuffleManager)
  mkdir -p "$dir"
  echo "bench spark-pipelined: round $round, $mgr, $ROWS rows (load $(cut -d' ' -f1 /proc/loadavg))..." >&2
  echo "load-$mgr-$round $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)" >> "$WORK/load"
  env JAVA_HOME="$SPARK_JAVA" SPARK_HOME="$SPARK_HOME" SPARK_LOCAL_IP=127.0.0.1 SPARK_WORKER_DIR="$dir/worker" \
    nice "$SPARK_HOME/bin/spark-submit" --master 'local-cluster[2,2,1024]' --jars "$SHADED" \
    --conf spark.ui.enabled=false --conf spark.local.dir="$dir/local" --conf spark.driver.memory=1g \
    "${extra[@]}" --class rdmxit.RealTimeJob "$WORK/job.jar" rows "$dir/out" "$dir" "$ROWS" > "$dir/log" 2>&1 \
    || { echo "bench spark-pipelined: $mgr run failed; see $dir/log" >&2; tail -30 "$dir/log" >&2; exit 1; }
  grep '^latencyMs ' "$dir/out" | sed "s/^/$mgr $round /" >> "$WORK/latency"
}
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then run streaming "$round"; run rdmx "$round"; else run rdmx "$round"; run streaming "$round"; fi
done
cat "$WORK/latency" >&2
# the median over rounds of each percentile (lines: mgr round latencyMs p50=.. p99=.. n=.. elapsedMs=..)
median() {  # median <mgr> <p50|p99>
  grep "^$1 " "$WORK/latency" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2 | sort -n \
    | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}
OUT="$ROOT/bench/results/spark-pipelined.json"
{
  echo "{"
  echo "  \"benchmark\": \"spark-pipelined\","
  echo "  \"timestamp\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"context\": {\"spark\": \"pyspark 4.3.0 local-cluster[2,2,1024]\", \"rows\": $ROWS, \"rounds\": $ROUNDS,"
  echo "    \"cores\": $(nproc), \"load\": \"$(tr '\n' ' ' < "$WORK/load" | sed 's/ $//')\"},"
  echo "  \"comparisons\": ["
  sep=""
  for p in p50 p99; do
    r=$(median rdmx $p); b=$(median streaming $p)
    ratio=$(awk -v r="$r" -v b="$b" 'BEGIN {if (r > 0) print b / r; else print "null"}')
    target=null
    [ $p = p50 ] && target='">= 2x lower p50 latency"'
    printf '%s    {"name": "rdmx pipelined vs Spark streaming: real-time query end-to-end latency %s", "rdmx": %s, "baseline": %s, "ratio": %s, "unit": "ms", "target": %s}' \
      "$sep" "$p" "$r" "$b" "$ratio" "$target"
    sep=$',\n'
  done
  echo ""
  echo "  ]"
  echo "}"
} > "$OUT"
cat "$OUT"
