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
python3 -m venv "$VENV" >&2
SRC="pyspark==$VERSION"
if [ -n "${RDMX_PYSPARK_SDIST:-}" ] && [ -f "$RDMX_PYSPARK_SDIST" ]; then SRC="$RDMX_PYSPARK_SDIST"; fi
"$VENV/bin/pip" install --disable-pip-version-check -q "$SRC" >&2
touch "$VENV/.complete"
home || { echo "pyspark-home: pyspark $VERSION installed into $VENV but bin/spark-submit is missing" >&2; exit 1; }
