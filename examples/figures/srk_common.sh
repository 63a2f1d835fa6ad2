# Shared by the seed-002 figure scripts: where ricochet is, where the
# runs and figures go.  RICOCHET=path/to/ricochet overrides the search;
# FIGDIR (default out/figures) receives the images.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -z "${RICOCHET:-}" ]; then
    for c in "$root/build/ricochet" "$root/build-cpu/ricochet" \
             "$(command -v ricochet || true)"; do
        if [ -n "$c" ] && [ -x "$c" ]; then RICOCHET=$c; break; fi
    done
fi
[ -n "${RICOCHET:-}" ] || { echo "ricochet not found: set RICOCHET" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "gnuplot not found" >&2; exit 2; }
FIGDIR=${FIGDIR:-$root/out/figures}
RUNDIR=${RUNDIR:-$root/out/srk}
mkdir -p "$FIGDIR" "$RUNDIR"
