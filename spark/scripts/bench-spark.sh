#!/usr/bin/env bash
# scripts/rdmx bench spark [--quick]: the OSU HiBD SortBy and GroupBy benchmarks on (int, long) pairs, Spark's
# default shuffle against io.rdmx.spark.RdmxShuffleManager in the same run, in local-cluster mode (two executor
# JVMs of 1 core and 1 GiB) of the pyspark 4.2.0 distribution (installed by pyspark-home.sh). 20M pairs (2M with
# --quick), 2 rounds (RDMX_SPARK_ROUNDS) in which the two managers alternate who goes first. Each spark-submit runs under
# /usr/bin/time (CPU seconds and context switches of driver and executors); the job's listener reports wall
# times, shuffle stage times, fetch wait and executor CPU. Then `benchmarks.jar spark-report` writes
# bench/results/spark.json and spark.svg. Expects the build (scripts/rdmx builds it first).
# Three managers side by side: Spark's default, rdmx (spark.rdmx.fetch=auto: blocks READ out of the serving
# executor's map output files) and rdmx-rpc (spark.rdmx.fetch=rpc: every block asked of its block server); each
# job line also gives the serving executors' CPU (their block-serving threads' CPU clocks) and rdmx's fetch counts.
# RDMX_SPARK_CONF="k=v k=v": more --conf settings for both managers' runs (spark.rdmx.* is read by rdmx's only).
# Each round also runs both managers with spark.authenticate=true (default-auth, rdmx-auth; a fresh secret in a
# 0600 properties file, off the command line); RDMX_SPARK_AUTH=0 leaves these runs out.
# --hosts: a standalone cluster across hosts (network namespaces of scripts/hosts.sh; root) instead of
# local-cluster, through Spark's own spark-class: the master and the driver in host 1, one worker (one executor of
# 1 core and 1 GiB) in each of hosts 2 and 3; unshaped, then with every host shaped to 10gbit; the plain managers
# only, 1 round unless RDMX_SPARK_ROUNDS says otherwise; reports bench/results/spark-hosts.json and
# spark-hosts-10gbit.json.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/env.sh"
QUICK=""
PAIRS=20000000
# rounds in which the two managers alternate who goes first (each figure is the median over them)
HOSTS_MODE=0
for a in "$@"; do [ "$a" = --hosts ] && HOSTS_MODE=1; done
ROUNDS="${RDMX_SPARK_ROUNDS:-$([ "$HOSTS_MODE" = 1 ] && echo 1 || echo 2)}"
case "$ROUNDS" in ''|*[!0-9]*|0) echo "bench spark: RDMX_SPARK_ROUNDS=$ROUNDS must be a whole number >= 1" >&2; exit 2 ;; esac
PARTITIONS=8
AUTH="${RDMX_SPARK_AUTH:-1}"
case "$AUTH" in 0|1) ;; *) echo "bench spark: RDMX_SPARK_AUTH=$AUTH must be 0 or 1" >&2; exit 2 ;; esac
for a in "$@"; do
  case "$a" in
    --quick) QUICK="--quick"; PAIRS=2000000 ;;
    --hosts) AUTH=0 ;;
    *) echo "bench spark: unknown option $a" >&2; exit 2 ;;
  esac
done
SHADED=$(ls "$ROOT"/spark/target/rdmx-spark-*-all.jar 2>/dev/null | head -1)
[ -n "$SHADED" ] && [ -d "$ROOT/spark/target/test-classes/io/rdmx/spark/it" ] \
  || { echo "bench spark: build first (mvn install -DskipTests)" >&2; exit 1; }
SPARK_HOME=$("$ROOT/spark/scripts/pyspark-home.sh")
SPARK_JAVA=""
for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-arm64 /usr/lib/jvm/openjdk-17; do
  if [ -x "$j/bin/java" ]; then SPARK_JAVA="$j"; break; fi
done
SPARK_JAVA="${RDMX_SPARK_JAVA_HOME:-${SPARK_JAVA:-$JAVA_HOME}}"
WORK="$ROOT/spark/target/bench-spark"
rm -rf "$WORK"
mkdir -p "$WORK/local"
(cd "$ROOT/spark/target/test-classes" && "$JAVA_HOME/bin/jar" cf "$WORK/jobs.jar" io/rdmx/spark/it)
TIME=()
if [ -x /usr/bin/time ]; then TIME=(/usr/bin/time -f "time %e %U %S %w %c"); fi
if [ "$AUTH" = 1 ]; then
  # the authenticated runs' settings: spark.authenticate with the application's secret (rdmx's block servers and
  # fetch clients take it from Spark's SecurityManager), from a file only this user can read
  (umask 077 && printf 'spark.authenticate=true\nspark.authenticate.secret=%s\n' \
    "$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')" > "$WORK/auth.properties")
fi
run() {  # run <manager> <round>; manager: default, rdmx, default-auth or rdmx-auth
  local mgr=$1 round=$2 extra=()
  case "$mgr" in rdmx*) extra=(--conf spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager) ;; esac
  case "$mgr" in rdmx-rpc*) extra+=(--conf spark.rdmx.fetch=rpc) ;; esac
  case "$mgr" in *-auth) extra+=(--properties-file "$WORK/auth.properties") ;; esac
  for kv in ${RDMX_SPARK_CONF:-}; do extra+=(--conf "$kv"); done
  echo "bench spark: round $round, $mgr shuffle, $PAIRS pairs..." >&2
  echo "load-$mgr-$round $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)" >> "$WORK/load"
  local timing=()
  [ ${#TIME[@]} -gt 0 ] && timing=("${TIME[@]}" -o "$WORK/$mgr-$round.time")
  local where=(env SPARK_LOCAL_IP=127.0.0.1) master=(--master 'local-cluster[2,1,1024]')
  if [ "$HOSTS_MODE" = 1 ]; then
    where=("$HOSTS" run 1 env SPARK_LOCAL_IP="$MASTER")
    master=(--master "spark://$MASTER:7077" --conf spark.driver.host="$MASTER" --conf spark.executor.memory=1g
      --conf spark.executor.cores=1 --conf spark.cores.max=2)
  fi
  "${where[@]}" JAVA_HOME="$SPARK_JAVA" SPARK_HOME="$SPARK_HOME" \
    "${timing[@]}" "$SPARK_HOME/bin/spark-submit" "${master[@]}" --jars "$SHADED" \
    --conf spark.ui.enabled=false --conf spark.local.dir="$WORK/local" --conf spark.driver.memory=1g \
    "${extra[@]}" --class io.rdmx.spark.it.ShuffleJobs "$WORK/jobs.jar" bench "$WORK/$mgr-$round.out" \
    "$PAIRS" "$PARTITIONS" > "$WORK/$mgr-$round.log" 2>&1 \
    || { echo "bench spark: $mgr run failed; see $WORK/$mgr-$round.log" >&2; tail -30 "$WORK/$mgr-$round.log" >&2; exit 1; }
}
MANAGERS=(default rdmx rdmx-rpc)
[ "$AUTH" = 1 ] && MANAGERS+=(default-auth rdmx-auth)
rounds() {
  for round in $(seq 1 "$ROUNDS"); do
    # odd rounds in this order, even rounds in the reverse one
    order=("${MANAGERS[@]}")
    if [ $((round % 2)) = 0 ]; then order=(); for m in "${MANAGERS[@]}"; do order=("$m" "${order[@]}"); done; fi
    for m in "${order[@]}"; do run "$m" "$round"; done
  done
  echo "pairs $PAIRS" > "$WORK/params"
  echo "managers ${MANAGERS[*]}" >> "$WORK/params"
  cat "$WORK/load" >> "$WORK/params"
  echo "partitions $PARTITIONS" >> "$WORK/params"
  echo "rounds $ROUNDS" >> "$WORK/params"
  echo "sparkJava $("$SPARK_JAVA/bin/java" -version 2>&1 | head -1)" >> "$WORK/params"
}
if [ "$HOSTS_MODE" = 0 ]; then
  rounds
  exec "$JAVA" $RDMX_JAVA_OPTS -jar "$ROOT/bench/target/benchmarks.jar" spark-report "$WORK" $QUICK
fi

# --hosts: a standalone cluster, master in host 1, a worker in hosts 2 and 3, each through spark-class
HOSTS="$ROOT/scripts/hosts.sh"
MASTER=10.77.0.2
CLUSTER=()
cluster_down() {
  local p h
  for p in "${CLUSTER[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${CLUSTER[@]}"; do wait "$p" 2>/dev/null || true; done
  CLUSTER=()
  # an executor the worker did not stop in time: whatever still runs in the hosts (only there)
  for h in 1 2 3; do
    for p in $(ip netns pids "rdmx-h$h" 2>/dev/null || true); do kill -KILL "$p" 2>/dev/null || true; done
  done
  "$HOSTS" down >/dev/null 2>&1 || true
}
trap cluster_down EXIT
cluster_up() {  # cluster_up RATE|""
  "$HOSTS" up 3 ${1:+--rate "$1"} >&2
  MASTER=$("$HOSTS" addr 1)
  env JAVA_HOME="$SPARK_JAVA" SPARK_HOME="$SPARK_HOME" SPARK_LOCAL_IP="$MASTER" SPARK_NO_DAEMONIZE=1 \
    "$HOSTS" run 1 "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master --host "$MASTER" \
    --port 7077 --webui-port 18080 > "$WORK/master.log" 2>&1 &
  CLUSTER+=($!)
  local i a
  for i in 2 3; do
    a=$("$HOSTS" addr "$i")
    mkdir -p "$WORK/worker$i"
    env JAVA_HOME="$SPARK_JAVA" SPARK_HOME="$SPARK_HOME" SPARK_LOCAL_IP="$a" SPARK_WORKER_DIR="$WORK/worker$i" \
      SPARK_LOCAL_DIRS="$WORK/local" "$HOSTS" run "$i" "$SPARK_HOME/bin/spark-class" \
      org.apache.spark.deploy.worker.Worker --host "$a" --cores 1 --memory 1g --webui-port 18081 \
      "spark://$MASTER:7077" > "$WORK/worker$i.log" 2>&1 &
    CLUSTER+=($!)
  done
  for i in $(seq 1 180); do
    [ "$(grep -c 'Registering worker' "$WORK/master.log" 2>/dev/null || true)" -ge 2 ] && return 0
    sleep 1
  done
  echo "bench spark --hosts: the two workers did not register with the master in 180 s" >&2
  tail -20 "$WORK/master.log" "$WORK/worker2.log" "$WORK/worker3.log" >&2
  exit 1
}
BASE="$WORK"
for rate in "" 10gbit; do
  link="${rate:-unshaped}"
  WORK="$BASE-hosts-$link"
  rm -rf "$WORK"
  mkdir -p "$WORK/local"
  cp "$BASE/jobs.jar" "$WORK/jobs.jar"
  echo "bench spark --hosts: $link: master and driver in host 1, a worker in hosts 2 and 3" >&2
  cluster_up "$rate"
  rounds
  cluster_down
  name=spark-hosts; [ -n "$rate" ] && name="spark-hosts-$rate"
  {
    echo "report $name"
    echo "link $link (scripts/hosts.sh: veth pairs on one bridge${rate:+, tc tbf $rate on the egress of each host})"
    echo "cluster pyspark 4.2.0 standalone through spark-class: master and driver in host 1, a worker with one executor (1 core, 1 GiB) in each of hosts 2 and 3 (network namespaces)"
    echo "rdmxProvider spark.rdmx.provider=auto: tcp between the executors, in different hosts (see the executors' logs under worker*/)"
  } >> "$WORK/params"
  "$JAVA" $RDMX_JAVA_OPTS -jar "$ROOT/bench/target/benchmarks.jar" spark-report "$WORK" $QUICK
done
