# Sourced by the benchmark scripts: is OR-tools' CP-SAT there for python $1?
# cpsat_probe PY sets have_cpsat to 1 or 0; cpsat_skip_message PY BUILD
# says how to get it. OR-tools is a reference to beat, never a dependency.
cpsat_probe() {
  have_cpsat=1
  if ! { [ -x "$1" ] && "$1" -c 'import ortools.sat.python.cp_model' 2>/dev/null; }; then have_cpsat=0; fi
}
cpsat_skip_message() {
  echo "CP-SAT skipped: OR-tools not found for $1; install it (a reference, never a dependency) with"
  echo "  python3 -m venv $2/venv && $2/venv/bin/pip install ortools"
}
