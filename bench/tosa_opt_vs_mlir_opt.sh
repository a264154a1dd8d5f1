#!/usr/bin/env bash
# Whole processes on the same module: `qfold-tosa-opt IN -o OUT` (parse, verify, fold with every
# pass, verify, print) against `mlir-opt IN -o OUT` (MLIR 22) (parse, verify, print), alternating, ROUNDS
# rounds; prints the median wall and CPU (user + sys) time of each and their ratios.
#
#   bench/tosa_opt_vs_mlir_opt.sh QFOLD_TOSA_OPT [MODULE.mlir] [ROUNDS]
#
# MODULE defaults to a 1,000-block module made by tests/tosa/make_modules.py --bench 1000 in a
# temporary directory (about a minute); ROUNDS defaults to 9. MLIR_OPT overrides /usr/lib/llvm-22/bin/mlir-opt.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
  echo "usage: $0 QFOLD_TOSA_OPT [MODULE.mlir] [ROUNDS]" >&2
  exit 2
fi
tool=$1
module=${2:-}
rounds=${3:-9}
mlir_opt=${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -z $module ]]; then
  module=$work/bench_1000.mlir
  echo "generating $module (make_modules.py --bench 1000) ..." >&2
  python3 "$here/../tests/tosa/make_modules.py" --bench 1000 "$module"
fi

# Runs a command once; prints "wall_seconds cpu_seconds" (cpu: user + sys of the child).
measure() {
  local t
  t=$({ TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2> "$work/stderr"; } 2>&1) || {
    echo "failed: $*" >&2
    cat "$work/stderr" >&2
    exit 1
  }
  read -r wall user sys <<< "$t"
  echo "$wall $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

: > "$work/q" && : > "$work/m"
for ((i = 1; i <= rounds; i++)); do
  # Alternate which goes first, so that neither always runs on a warmer page cache.
  if ((i % 2)); then
    measure "$tool" "$module" -o "$work/q.mlir" >> "$work/q"
    measure "$mlir_opt" "$module" -o "$work/m.mlir" >> "$work/m"
  else
    measure "$mlir_opt" "$module" -o "$work/m.mlir" >> "$work/m"
    measure "$tool" "$module" -o "$work/q.mlir" >> "$work/q"
  fi
done

qw=$(cut -d' ' -f1 "$work/q" | median)
qc=$(cut -d' ' -f2 "$work/q" | median)
mw=$(cut -d' ' -f1 "$work/m" | median)
mc=$(cut -d' ' -f2 "$work/m" | median)
echo "module: $module ($(wc -c < "$module") bytes), $rounds rounds, alternating"
echo "qfold-tosa-opt IN -o OUT: wall median ${qw} s [$(cut -d' ' -f1 "$work/q" | sort -g | head -1), $(cut -d' ' -f1 "$work/q" | sort -g | tail -1)], cpu median ${qc} s"
echo "$mlir_opt IN -o OUT: wall median ${mw} s [$(cut -d' ' -f1 "$work/m" | sort -g | head -1), $(cut -d' ' -f1 "$work/m" | sort -g | tail -1)], cpu median ${mc} s"
awk -v qw="$qw" -v mw="$mw" -v qc="$qc" -v mc="$mc" \
  'BEGIN { printf "ratio qfold-tosa-opt / mlir-opt: wall %.2fx, cpu %.2fx\n", qw / mw, qc / mc }'
