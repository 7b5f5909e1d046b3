#!/bin/sh
# Checks crates/capi/include/mpi.h:
#   1. it compiles cleanly (strict warnings, -Werror) as C89, C99, C11 (also -O2) and
#      C++98/11/20;
#   2. against MPICH's header (abi_check.py): every MPI constant, typedef,
#      callback type and function prototype MPICH declares exists in ours with
#      the same value / type / parameter types, and every MPI_ function has a
#      PMPI_ twin.
#
# Usage: crates/capi/tests/header/check.sh [-v]      (-v lists passing checks too)
# Environment: CC, CXX (compilers), MPICH_INCLUDE (directory of MPICH's mpi.h,
# default: Debian's), OXMPI_REQUIRE_MPICH=1 (fail instead of skipping part 2
# when MPICH's header is not installed).
# Prints `N passed, M failed` last; exits non-zero on any failure.

set -u
here=$(cd "$(dirname "$0")" && pwd)
include=$(cd "$here/../../include" && pwd)
mpich=${MPICH_INCLUDE:-/usr/include/x86_64-linux-gnu/mpich}
cc=${CC:-cc}
cxx=${CXX:-c++}
verbose=
[ "${1:-}" = "-v" ] && verbose=-v

passed=0
failed=0
work=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-header-check.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM

compile() { # description, compiler and flags...
    what=$1
    shift
    if "$@" -I"$include" -c "$here/sample.c" -o "$work/sample.o" >"$work/log" 2>&1; then
        passed=$((passed + 1))
        [ -n "$verbose" ] && echo "ok      header compiles: $what"
    else
        failed=$((failed + 1))
        echo "FAIL    header compiles: $what"
        sed 's/^/        /' "$work/log" | head -n 20
    fi
}

cwarn="-Wall -Wextra -pedantic -Werror -Wstrict-prototypes -Wmissing-prototypes -Wshadow -Wcast-qual -Wconversion -Wredundant-decls"
for std in c89 c99 c11; do
    # shellcheck disable=SC2086
    compile "$cc -std=$std" "$cc" -std=$std $cwarn
done
# Optimised, GCC checks the arguments against the parameters' declared sizes.
# shellcheck disable=SC2086
compile "$cc -std=c11 -O2" "$cc" -std=c11 -O2 $cwarn
for std in c++98 c++11 c++20; do
    compile "$cxx -std=$std" "$cxx" -std=$std -Wall -Wextra -pedantic -Werror -Wshadow -x c++
done

if [ -f "$mpich/mpi.h" ]; then
    python3 "$here/abi_check.py" $verbose --cc "$cc" --mpich-include "$mpich" \
        --ours-include "$include" >"$work/abi.out" 2>&1
    status=$?
    summary=$(tail -n 1 "$work/abi.out")
    sed '$d' "$work/abi.out"
    p=$(echo "$summary" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    f=$(echo "$summary" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    if [ -z "$p" ]; then
        echo "FAIL    abi_check.py did not finish (exit $status): $summary"
        failed=$((failed + 1))
    else
        passed=$((passed + p))
        failed=$((failed + f))
        if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
            failed=$((failed + 1))
        fi
    fi
elif [ "${OXMPI_REQUIRE_MPICH:-0}" = 1 ]; then
    echo "FAIL    MPICH's mpi.h not found in $mpich (set MPICH_INCLUDE)"
    failed=$((failed + 1))
else
    echo "SKIP    comparison with MPICH: no mpi.h in $mpich (set MPICH_INCLUDE, or install libmpich-dev)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
