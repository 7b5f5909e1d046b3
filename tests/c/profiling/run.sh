#!/usr/bin/env bash
# Profiling-interface test: a tool (tool.c) that defines MPI_ functions, counts calls and
# forwards to PMPI_, watching a program (prog.c) that checks the counts are exactly its own
# calls. The tool is used three ways:
#   object   tool.c compiled into the program
#   linked   tool.c as a shared library linked before -lmpi
#   preload  tool.c as a shared library loaded with LD_PRELOAD into a program built without it
# plus two controls: the program without any tool must say "tool not loaded" and fail (so
# the check cannot pass vacuously), and (oxmpi only) libmpi.so must contain no call through
# the PLT to one of its own MPI_ names (such a call would reach a tool and be counted twice).
#
# Usage: tests/c/profiling/run.sh
# Environment: OXMPI_PREFIX (default <repo>/target/oxmpi), MPICC (default
# $OXMPI_PREFIX/bin/mpicc), MPIEXEC (default $OXMPI_PREFIX/bin/mpiexec), BUILD_DIR
# (default <repo>/target/tests-c/profiling), NPROCS (default "1 2 4").
# Prints one PASS/FAIL line per check and "N passed, M failed"; exit status 0 iff all pass.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PREFIX=${OXMPI_PREFIX:-$REPO/target/oxmpi}
MPICC=${MPICC:-$PREFIX/bin/mpicc}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
B=${BUILD_DIR:-$REPO/target/tests-c/profiling}
NPROCS=${NPROCS:-1 2 4}

passed=0
failed=0
pass() { echo "PASS $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

mkdir -p "$B" || { echo "cannot create $B" >&2; exit 2; }
read -r -a CC <<<"$MPICC"
read -r -a RUN <<<"$MPIEXEC"

build() {
    local what=$1
    shift
    if "${CC[@]}" -O1 -Wall -Werror "$@" >"$B/$what.log" 2>&1; then
        return 0
    fi
    fail "build $what"
    sed 's/^/    | /' "$B/$what.log" | tail -n 15
    return 1
}

ok=1
build tool.o -c -fPIC -o "$B/tool.o" "$HERE/tool.c" || ok=0
build libmpitool.so -shared -fPIC -o "$B/libmpitool.so" "$HERE/tool.c" || ok=0
build prog_object -o "$B/prog_object" "$HERE/prog.c" "$B/tool.o" -rdynamic -ldl || ok=0
build prog_linked -o "$B/prog_linked" "$HERE/prog.c" -L"$B" -Wl,-rpath,"$B" -lmpitool -ldl || ok=0
build prog_plain -o "$B/prog_plain" "$HERE/prog.c" -ldl || ok=0
if [ $ok = 0 ]; then
    echo "$passed passed, $failed failed"
    exit 1
fi

# run NAME NP [launcher options...] -- PROGRAM: expects exit 0 and " No Errors".
run_ok() {
    local name=$1 np=$2
    shift 2
    local out="$B/$name.np$np.out" err="$B/$name.np$np.err"
    timeout -k 5 60 "${RUN[@]}" "$@" -n "$np" "$B/prog_$name" </dev/null >"$out" 2>"$err"
    local rc=$?
    if [ $rc -eq 0 ] && grep -q '^ No Errors$' "$out"; then
        pass "$name np=$np"
    else
        fail "$name np=$np (exit $rc)"
        tail -n 8 "$out" "$err" | sed 's/^/    | /'
    fi
}

for np in $NPROCS; do
    run_ok object "$np"
    run_ok linked "$np"
    run_ok plain "$np" -genv LD_PRELOAD "$B/libmpitool.so"
done

# control: no tool at all
timeout -k 5 60 "${RUN[@]}" -n 1 "$B/prog_plain" </dev/null >"$B/none.out" 2>"$B/none.err"
rc=$?
if [ $rc -ne 0 ] && grep -q "tool not loaded" "$B/none.err"; then
    pass "control: no tool is detected"
else
    fail "control: program without a tool (exit $rc)"
    tail -n 8 "$B/none.out" "$B/none.err" | sed 's/^/    | /'
fi

# oxmpi's library never calls its own interceptable names through the PLT
LIB="$PREFIX/lib/libmpi.so"
if [ -e "$LIB" ] && [ "$MPICC" = "$PREFIX/bin/mpicc" ]; then
    if ! command -v objdump >/dev/null 2>&1; then
        fail "PLT check: objdump not found"
    else
        calls=$(objdump -d --no-show-raw-insn "$LIB" | grep -E '<MPI_[A-Za-z0-9_]*@plt>' | sort -u)
        if [ -z "$calls" ]; then
            pass "libmpi.so makes no PLT calls to MPI_ names"
        else
            fail "libmpi.so calls its own MPI_ names through the PLT:"
            echo "$calls" | head -n 10 | sed 's/^/    | /'
        fi
    fi
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
