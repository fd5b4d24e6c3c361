# Sourced by the rdmx scripts: finds (or installs) a JDK and Maven, and sets JAVA_HOME, MVN, JAVA.
# Prefers JDK 25 (needed by the verbs provider at run time); any JDK >= 17 builds and runs the rest.

rdmx_java_feature() { "$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}'; }

rdmx_find_jdk() {
  local c
  for c in "${RDMX_JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk-arm64 \
           /usr/lib/jvm/temurin-25* /usr/lib/jvm/java-25* "${JAVA_HOME:-}" /usr/lib/jvm/java-21* \
           /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/*; do
    [ -n "$c" ] && [ -x "$c/bin/javac" ] || continue
    local v; v=$(rdmx_java_feature "$c/bin/java")
    v=${v%%.*}
    if [ -n "$v" ] && [ "$v" -ge 17 ] 2>/dev/null; then echo "$c"; return 0; fi
  done
  return 1
}

# The home of an installed JDK of exactly feature version $1 ($RDMX_JAVA<N>_HOME first), e.g. 17; fails if none.
rdmx_find_jdk_exactly() {
  local want="$1" override="RDMX_JAVA${1}_HOME" c v
  for c in "${!override:-}" /usr/lib/jvm/temurin-"$want"* /usr/lib/jvm/java-"$want"-openjdk-* /usr/lib/jvm/*; do
    [ -n "$c" ] && [ -x "$c/bin/java" ] || continue
    v=$(rdmx_java_feature "$c/bin/java")
    if [ "${v%%.*}" = "$want" ]; then echo "$c"; return 0; fi
  done
  return 1
}

# The home of a JDK 17 (the bytecode level the README promises), installing openjdk-17-jdk-headless if absent.
rdmx_jdk17() {
  local h
  if ! h=$(rdmx_find_jdk_exactly 17); then
    echo "rdmx: no JDK 17 found; installing openjdk-17-jdk-headless" >&2
    if command -v apt-get >/dev/null; then
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless >&2
    fi
    h=$(rdmx_find_jdk_exactly 17) || { echo "rdmx: cannot find or install a JDK 17" >&2; return 1; }
  fi
  echo "$h"
}

# Maven's option that runs the tests of the Java 17 modules a second time on a JDK 17 (the parent pom's
# jdk17-tests profile), or nothing when JAVA_HOME is a JDK 17 already or RDMX_SKIP_JDK17=1. Says which on stderr.
rdmx_jdk17_opt() {
  local h
  if [ "$RDMX_JAVA_FEATURE" = 17 ]; then
    echo "rdmx: JAVA_HOME is a JDK 17: the tests run once, on it" >&2
  elif [ "${RDMX_SKIP_JDK17:-0}" = 1 ]; then
    echo "rdmx: RDMX_SKIP_JDK17=1: the Java 17 modules were NOT tested on a JDK 17" >&2
  else
    h=$(rdmx_jdk17) || return 1
    echo "rdmx: the tests of core, tcp, cli, affinity, shuffle, rpc, rpc-hadoop, spark and disni run on Java $RDMX_JAVA_FEATURE, then again on" \
      "$h (Java 17; surefire execution 'jdk17', reports in target/surefire-reports-jdk17)" >&2
    echo "-Drdmx.jdk17.java=$h/bin/java"
  fi
}

if ! JAVA_HOME=$(rdmx_find_jdk); then
  echo "rdmx: no JDK >= 17 found; installing openjdk-17-jdk-headless" >&2
  if command -v apt-get >/dev/null; then
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless >&2
  fi
  JAVA_HOME=$(rdmx_find_jdk) || { echo "rdmx: cannot find or install a JDK >= 17" >&2; exit 1; }
fi
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
RDMX_JAVA_FEATURE=$(rdmx_java_feature "$JAVA"); RDMX_JAVA_FEATURE=${RDMX_JAVA_FEATURE%%.*}
# RDMX_EXTRA_JAVA_OPTS: more JVM flags for the commands of scripts/rdmx (e.g. -Drdmx.bench.cases=shm/park,nio/)
RDMX_JAVA_OPTS="${RDMX_EXTRA_JAVA_OPTS:-}"
if [ "$RDMX_JAVA_FEATURE" -ge 23 ]; then
  # JCTools still uses sun.misc.Unsafe; allow it without the JDK 24+ warning.
  RDMX_JAVA_OPTS="$RDMX_JAVA_OPTS --sun-misc-unsafe-memory-access=allow --enable-native-access=ALL-UNNAMED"
fi
export MAVEN_OPTS="${MAVEN_OPTS:-} $RDMX_JAVA_OPTS"

if ! command -v mvn >/dev/null; then
  echo "rdmx: Maven not found; installing it" >&2
  if command -v apt-get >/dev/null; then
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >&2
  fi
  command -v mvn >/dev/null || { echo "rdmx: cannot find or install Maven" >&2; exit 1; }
fi
MVN="mvn -B -ntp"
