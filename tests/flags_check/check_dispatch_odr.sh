#!/usr/bin/env bash
# Dispatch ODR check (kernels/README.md, "Per-instruction-set code").
# A program that compiles kernels/dispatch/avx2.cpp and avx512bw.cpp with their
# flags and everything else for the x86-64 baseline must not share any
# out-of-line function between the two kinds of object if the dispatch copy
# holds instructions the baseline CPU may lack: the linker keeps one copy of a
# shared (weak / COMDAT) symbol, and baseline callers could get the AVX one.
#
# For each optimisation level this compiles the dispatch units and two
# baseline translation units (tests/flags_check/instantiate_kernels.cpp, the
# README's examples/embed.cpp) with NUMGAP_RUNTIME_DISPATCH=1, lists every
# global or weak symbol a dispatch object defines that a baseline object also
# defines, and fails if the dispatch object's copy of one contains a
# VEX/EVEX instruction (mnemonic starting with "v") or a ymm/zmm/mask
# register. Prints each offending symbol (demangled) with its first wide
# instruction.
#
# usage: check_dispatch_odr.sh <c++ compiler> <source dir> <work dir> [opt levels...]
set -euo pipefail
compiler=$1 source_dir=$2 work_dir=$3
shift 3
levels=("$@")
[ ${#levels[@]} -gt 0 ] || levels=(-O0 -Og -O3)

dispatch_dir="$source_dir/include/numgap/kernels/dispatch"
common=(-std=c++20 -I"$source_dir/include" -DNUMGAP_RUNTIME_DISPATCH=1 -c)
avx2_flags=(-mavx2 -mfma -mf16c)
avx512_flags=(-mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx2 -mfma)
mkdir -p "$work_dir"

# Defined global/weak symbols of an object, mangled, one per line.
defined_symbols() { nm -P --defined-only "$1" | awk '$2 ~ /^[TWViu]$/ {print $1}' | sort -u; }

# Symbols of an object whose code is wider than a reference instruction set,
# as "symbol<TAB>first wide instruction". Against the x86-64 baseline: any
# VEX/EVEX instruction (every AVX mnemonic starts with "v") or ymm/zmm/mask
# register. Against AVX2 (second argument "avx512"): zmm, mask registers,
# xmm16-31/ymm16-31 or embedded broadcasts, which only EVEX encodes.
wide_symbols() {
    objdump -d --no-show-raw-insn "$1" | awk -v against="${2:-baseline}" '
        /^[0-9a-f]+ <.*>:$/ { symbol = substr($2, 2, length($2) - 3); next }
        symbol != "" && !(symbol in seen) {
            line = $0
            sub(/^[ \t]*[0-9a-f]+:[ \t]*/, "", line)
            split(line, parts, /[ \t]+/)
            if (against == "avx512")
                wide = line ~ /%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])|\{1to/
            else
                wide = parts[1] ~ /^v/ || line ~ /%[yz]mm[0-9]|%k[0-7]/
            if (wide) { seen[symbol] = 1; print symbol "\t" line }
        }'
}

# Reports the symbols of "$1.shared" (defined in both objects) that
# "$1.wide" lists as wider, under the heading "$2"; counts them as failures.
failures=0
report() {
    join -t $'\t' "$1.shared" "$1.wide" > "$1.violations" || true
    local count
    count=$(wc -l < "$1.violations")
    echo "$2: $(wc -l < "$1.shared") symbols shared, $count with wider instructions"
    while IFS=$'\t' read -r symbol instruction; do
        echo "  $(echo "$symbol" | c++filt)    [$instruction]"
    done < "$1.violations"
    failures=$((failures + count))
}

# Every object of every level first, as many compiles at once as there are
# cores (five objects a level, ~250 CPU seconds in all with g++ 12: run one
# after the other they were the longest test of the suite).
jobs=$(nproc 2>/dev/null || echo 2)
compile() { # level, output, then the source and its extra flags
    local level=$1 output=$2
    shift 2
    "$compiler" "${common[@]}" "$level" "$@" -o "$output"
}
pending=0
trap 'kill $(jobs -p) 2> /dev/null || true' EXIT
for level in "${levels[@]}"; do
    out="$work_dir/${level#-}"
    mkdir -p "$out"
    for object in sse2 avx2 avx512bw baseline_kernels baseline_embed; do
        case $object in
            sse2) set -- "$dispatch_dir/sse2.cpp" ;;
            avx2) set -- "${avx2_flags[@]}" "$dispatch_dir/avx2.cpp" ;;
            avx512bw) set -- "${avx512_flags[@]}" "$dispatch_dir/avx512bw.cpp" ;;
            baseline_kernels) set -- "$source_dir/tests/flags_check/instantiate_kernels.cpp" ;;
            baseline_embed) set -- "$source_dir/examples/embed.cpp" ;;
        esac
        if [ "$pending" -ge "$jobs" ]; then
            wait -n
            pending=$((pending - 1))
        fi
        compile "$level" "$out/$object.o" "$@" &
        pending=$((pending + 1))
    done
done
# wait -n returns each compile's status: a failed one stops the check (set -e).
while [ "$pending" -gt 0 ]; do
    wait -n
    pending=$((pending - 1))
done

for level in "${levels[@]}"; do
    out="$work_dir/${level#-}"
    cat <(defined_symbols "$out/sse2.o") <(defined_symbols "$out/baseline_kernels.o") \
        <(defined_symbols "$out/baseline_embed.o") | sort -u > "$out/baseline.symbols"
    for unit in avx2 avx512bw; do
        defined_symbols "$out/$unit.o" > "$out/$unit.symbols"
        comm -12 "$out/$unit.symbols" "$out/baseline.symbols" > "$out/$unit.shared"
        wide_symbols "$out/$unit.o" | sort -t $'\t' -k1,1 > "$out/$unit.wide"
        report "$out/$unit" "$level $unit.cpp against baseline objects"
    done
    # The AVX-512 unit against the AVX2 unit: a CPU with AVX2 but not
    # AVX-512 runs the AVX2 kernels, which must not reach AVX-512 copies.
    comm -12 "$out/avx512bw.symbols" "$out/avx2.symbols" > "$out/avx512bw_avx2.shared"
    wide_symbols "$out/avx512bw.o" avx512 | sort -t $'\t' -k1,1 > "$out/avx512bw_avx2.wide"
    report "$out/avx512bw_avx2" "$level avx512bw.cpp against avx2.cpp"
done
if [ "$failures" -gt 0 ]; then
    echo "FAIL: $failures shared symbols whose dispatch copy needs a wider instruction set than the code sharing it"
    exit 1
fi
echo "OK: no symbol shared between dispatch units and baseline code holds wider instructions"
