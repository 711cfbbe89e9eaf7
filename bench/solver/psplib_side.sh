#!/usr/bin/env bash
# Two build/psplib binaries side by side on the same instances: each
# instance is solved by A, then by B, so that the machine's load falls on
# both alike. Writes A's and B's result lines to OUT.a and OUT.b and prints
# the rows of bench/solver/psplib_stats.py for both.
#   bench/solver/psplib_side.sh A B BOUNDS.csv OUT LABEL_A LABEL_B INSTANCE...
# e.g. (the parent's binary copied aside first):
#   bench/solver/psplib_side.sh build/psplib-base build/psplib \
#     ../shared/data/psplib/solutions/j30_bounds.csv build/side-j30 "J30, base" "J30, new" \
#     build/psplib-data/j30/*.sm
set -euo pipefail
a=$1 b=$2 bounds=$3 out=$4 la=$5 lb=$6
shift 6
: > "$out.a"
: > "$out.b"
for f in "$@"; do
  "$a" "$f" | grep -v '^summary' >> "$out.a" || true
  "$b" "$f" | grep -v '^summary' >> "$out.b" || true
done
python3 "$(dirname "$0")/psplib_stats.py" "$bounds" "$out.a" "$la"
python3 "$(dirname "$0")/psplib_stats.py" "$bounds" "$out.b" "$lb"
