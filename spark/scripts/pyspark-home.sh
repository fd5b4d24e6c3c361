#!/usr/bin/env bash
# Prints the SPARK_HOME of a pyspark distribution installed into a cached, project-local virtual environment,
# installing it on first use (python3 -m venv + pip; about 450 MB from PyPI).
#   RDMX_PYSPARK_VERSION  the pyspark version (4.2.0)
#   RDMX_PYSPARK_CACHE    where the venvs live (~/.cache/rdmx); outside target/ so `mvn clean` keeps it
#   RDMX_PYSPARK_SDIST    optional: a local pyspark-<version>.tar.gz for pip to install instead of downloading
# Everything but the final path goes to stderr. Safe to run concurrently: the install holds a lock.
set -euo pipefail
VERSION="${RDMX_PYSPARK_VERSION:-4.2.0}"
CACHE="${RDMX_PYSPARK_CACHE:-$HOME/.cache/rdmx}"
VENV="$CACHE/pyspark-$VERSION"
mkdir -p "$CACHE"
home() {
  local py="$VENV/bin/python"
  [ -x "$py" ] || return 1
  local dir
  dir=$("$py" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null) || return 1
  [ -x "$dir/bin/spark-submit" ] && [ -f "$VENV/.complete" ] || return 1
  echo "$dir"
}
if home; then exit 0; fi
exec 9>"$CACHE/pyspark-$VERSION.lock"
flock -w 1800 9 || { echo "pyspark-home: timed out waiting for $CACHE/pyspark-$VERSION.lock" >&2; exit 1; }
if home; then exit 0; fi
echo "pyspark-home: installing pyspark $VERSION into $VENV (first use; downloads about 450 MB)" >&2
rm -rf "$VENV"
command -v python3 >/dev/null || { echo "pyspark-home: python3 is needed (3.9 or later)" >&2; exit 1; }
if ! python3 -m venv "$VENV" >&2; then
  # Debian and Ubuntu ship venv separately: install it as the project's scripts install JDKs and Maven
  rm -rf "$VENV"
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python$pyver-venv" >&2 \
      || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
    python3 -m venv "$VENV" >&2
  else
    echo "pyspark-home: python3 -m venv failed; install the venv module (python3-venv)" >&2
    exit 1
  fi
fi
SRC="pyspark==$VERSION"
if [ -n "${RDMX_PYSPARK_SDIST:-}" ] && [ -f "$RDMX_PYSPARK_SDIST" ]; then SRC="$RDMX_PYSPARK_SDIST"; fi
"$VENV/bin/pip" install --disable-pip-version-check -q "$SRC" >&2
touch "$VENV/.complete"
home || { echo "pyspark-home: pyspark $VERSION installed into $VENV but bin/spark-submit is missing" >&2; exit 1; }
