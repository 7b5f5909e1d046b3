#!/bin/sh
# Tests mpicc.in, mpicxx.in and mpi.pc.in: stages them into a throw-away prefix
# (with the real include/mpi.h and a small stand-in libmpi.so that exists only for
# this test), then checks what the wrappers print and that programs they build
# compile, link with the right rpath, and run. Also moves the prefix and calls the
# wrappers through symlinks to prove the tree is relocatable.
#
# Usage: crates/capi/wrappers/test.sh       (runs under /bin/sh; SHELL_UNDER_TEST=bash
# runs the wrappers with another shell). Prints `N passed, M failed`; exits non-zero
# on any failure.

set -u
here=$(cd "$(dirname "$0")" && pwd)
capi=$(dirname "$here")
shell=${SHELL_UNDER_TEST:-/bin/sh}
version=9.8.7-test
passed=0
failed=0
work=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-wrappers.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL    $*"; }
expect() { # description, expected, actual
    if [ "$2" = "$3" ]; then ok; else fail "$1"; echo "        expected: $2"; echo "        actual:   $3"; fi
}

stage() { # prefix
    mkdir -p "$1/bin" "$1/include" "$1/lib/pkgconfig"
    for w in mpicc mpicxx mpifort; do
        sed -e "s|@OXMPI_VERSION@|$version|g" "$here/$w.in" >"$1/bin/$w"
        chmod +x "$1/bin/$w"
    done
    cp "$capi/include/mpi.h" "$capi/include/mpio.h" "$1/include/"
    sed -e "s|@prefix@|$1|g" -e "s|@OXMPI_VERSION@|$version|g" "$here/mpi.pc.in" >"$1/lib/pkgconfig/mpi.pc"
    # A stand-in library with the three functions the test program calls.
    cat >"$work/standin.c" <<'EOF'
#include <mpi.h>
int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; return MPI_SUCCESS; }
int MPI_Comm_rank(MPI_Comm comm, int *rank) { *rank = comm == MPI_COMM_WORLD ? 42 : -1; return MPI_SUCCESS; }
int MPI_Finalize(void) { return MPI_SUCCESS; }
EOF
    cc -shared -fPIC -I"$1/include" -Wl,-soname,libmpi.so.12 "$work/standin.c" -o "$1/lib/libmpi.so.12"
    ln -s libmpi.so.12 "$1/lib/libmpi.so"
}

P="$work/prefix with space"
stage "$P"
Q=$work/plain
stage "$Q"
mpicc() { "$shell" "$Q/bin/mpicc" "$@"; }

# ---- what -show and friends print -------------------------------------------
inc="-I$Q/include"
link="-L$Q/lib -Wl,-rpath,$Q/lib -lmpi"
expect "-show" "cc $inc $link" "$(mpicc -show)"
expect "-showme" "cc $inc x.c -o x $link" "$(mpicc -showme x.c -o x)"
expect "--showme" "cc $inc x.c $link" "$(mpicc --showme x.c)"
expect "-show -c" "cc $inc -c x.c" "$(mpicc -show -c x.c)"
for flag in -E -S -M -MM -fsyntax-only; do
    expect "-show $flag" "cc $inc $flag x.c" "$(mpicc -show $flag x.c)"
done
expect "-compile_info" "cc $inc x.c" "$(mpicc -compile_info x.c)"
expect "-compile-info" "cc $inc" "$(mpicc -compile-info)"
expect "-link_info" "cc $inc -c x.c $link" "$(mpicc -link_info -c x.c)"
expect "-show-compile-info" "$inc" "$(mpicc -show-compile-info)"
expect "-showme:compile" "$inc" "$(mpicc -showme:compile)"
expect "-show-link-info" "$link" "$(mpicc -show-link-info)"
expect "--showme:link" "$link" "$(mpicc --showme:link)"
expect "-showme:incdirs" "$Q/include" "$(mpicc -showme:incdirs)"
expect "-showme:libdirs" "$Q/lib" "$(mpicc -showme:libdirs)"
expect "-showme:libs" "mpi" "$(mpicc -showme:libs)"
expect "-showme:version" "mpicc: oxmpi $version (Language: C)" "$(mpicc -showme:version)"
expect "mpicxx -show" "c++ $inc y.cc $link" "$("$shell" "$Q/bin/mpicxx" -show y.cc)"
expect "mpicxx version" "mpicxx: oxmpi $version (Language: C++)" "$("$shell" "$Q/bin/mpicxx" -showme:version)"
expect "-show quotes" "cc $inc '-DMSG=\"a b\"' 'it'\\''s' x.c $link" "$(mpicc -show '-DMSG="a b"' "it's" x.c)"
expect "-show empty argument" "cc $inc '' $link" "$(mpicc -show '')"

# ---- mpifort -------------------------------------------------------------------
mpifort() { "$shell" "$Q/bin/mpifort" "$@"; }
expect "mpifort -show" "myfc $inc x.f90 $link" "$(OXMPI_FC=myfc mpifort -show x.f90)"
expect "mpifort -fc=" "otherfc $inc -c x.f" "$(OXMPI_FC=myfc mpifort -fc=otherfc -show -c x.f)"
expect "mpifort MPICH_FC" "mfc $inc x.f90 $link" "$(MPICH_FC=mfc mpifort -show x.f90)"
expect "mpifort version" "mpifort: oxmpi $version (Language: Fortran)" "$(mpifort -showme:version)"
if command -v gfortran >/dev/null 2>&1; then
    # gfortran 10 and later get -fallow-argument-mismatch (mpif.h programs need it).
    major=$(gfortran -dumpversion | cut -d. -f1)
    flag=
    [ "$major" -ge 10 ] && flag="-fallow-argument-mismatch "
    expect "mpifort gfortran flags" "gfortran $flag$inc -c x.f90" "$(mpifort -show -c x.f90)"
fi

# ---- choosing the compiler ----------------------------------------------------
expect "OXMPI_CC" "gcc $inc -c x.c" "$(OXMPI_CC=gcc mpicc -show -c x.c)"
expect "MPICH_CC" "clang $inc -c x.c" "$(MPICH_CC=clang mpicc -show -c x.c)"
expect "OXMPI_CC beats MPICH_CC" "gcc $inc -c x.c" "$(OXMPI_CC=gcc MPICH_CC=clang mpicc -show -c x.c)"
expect "-cc=" "ccache gcc $inc -c x.c" "$(mpicc '-cc=ccache gcc' -show -c x.c)"
expect "OXMPI_CXX" "g++ $inc -c y.cc" "$(OXMPI_CXX=g++ "$shell" "$Q/bin/mpicxx" -show -c y.cc)"
expect "mpicxx ignores OXMPI_CC" "c++ $inc -c y.cc" "$(OXMPI_CC=gcc "$shell" "$Q/bin/mpicxx" -show -c y.cc)"

# ---- errors --------------------------------------------------------------------
if mpicc >/dev/null 2>&1; then fail "no arguments should fail"; else ok; fi
out=$(OXMPI_CC="$Q/bin/mpicc" mpicc -c x.c 2>&1)
status=$?
if [ "$status" -ne 0 ] && echo "$out" | grep -q "called recursively"; then ok; else fail "recursion not caught: $out"; fi
expect "-help" "0" "$(mpicc -help >/dev/null; echo $?)"

# ---- real builds, in a prefix whose path has a space ----------------------------
cat >"$work/hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank = -7;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("%s %d %d\n", MSG, rank, OXMPI);
    return MPI_Finalize();
}
EOF
cp "$work/hello.c" "$work/hello.cc"
cd "$work" || exit 2
if "$shell" "$P/bin/mpicc" -Wall -Werror '-DMSG="hello world"' hello.c -o hello_c 2>"$work/err"; then
    expect "C program output" "hello world 42 1" "$(env -u LD_LIBRARY_PATH ./hello_c)"
    if readelf -d hello_c | grep -E 'R(UN)?PATH' | grep -q "$P/lib"; then ok; else fail "no rpath to $P/lib"; fi
else
    fail "mpicc build: $(cat "$work/err")"
fi
if "$shell" "$P/bin/mpicxx" -Wall -Werror '-DMSG="hi c++"' hello.cc -o hello_cc 2>"$work/err"; then
    expect "C++ program output" "hi c++ 42 1" "$(env -u LD_LIBRARY_PATH ./hello_cc)"
else
    fail "mpicxx build: $(cat "$work/err")"
fi
if "$shell" "$P/bin/mpicc" -c '-DMSG="x"' hello.c -o hello.o 2>"$work/err" &&
    "$shell" "$P/bin/mpicc" hello.o -o hello_2step 2>>"$work/err"; then
    expect "separate compile and link" "x 42 1" "$(env -u LD_LIBRARY_PATH ./hello_2step)"
else
    fail "two-step build: $(cat "$work/err")"
fi

# ---- relocation: move the prefix, call through symlinks ------------------------
R=$work/moved/deeper
mkdir -p "$work/moved"
mv "$Q" "$R"
expect "moved prefix" "cc -I$R/include -c x.c" "$("$shell" "$R/bin/mpicc" -show -c x.c)"
mkdir -p "$work/links/sub"
ln -s "$R/bin/mpicc" "$work/links/abs-mpicc"
ln -s ../moved/deeper/bin/mpicc "$work/links/rel-mpicc"
ln -s ../rel-mpicc "$work/links/sub/chain-mpicc"
for link in abs-mpicc rel-mpicc sub/chain-mpicc; do
    expect "symlink $link" "cc -I$R/include -c x.c" "$("$shell" "$work/links/$link" -show -c x.c)"
done
expect "relative invocation" "cc -I$R/include -c x.c" "$(cd "$R/bin" && "$shell" ./mpicc -show -c x.c)"
mkdir -p "$work/pathdir"
ln -s ../links/sub/chain-mpicc "$work/pathdir/mpicc"
# Run through PATH and the script's own #! line, as a user would.
expect "found on PATH" "cc -I$R/include -c x.c" "$(PATH="$work/pathdir:$PATH" command mpicc -show -c x.c)"

# ---- pkg-config ----------------------------------------------------------------
# pkg-config ends its output with a space; compare without it.
pc() { pkg-config "$@" | sed 's/ *$//'; }
if command -v pkg-config >/dev/null 2>&1; then
    expect "pkg-config --modversion" "$version" "$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pc --modversion mpi)"
    expect "pkg-config --cflags" "-I$P/include" "$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pc --cflags mpi)"
    S=$work/pc
    mkdir -p "$S/lib/pkgconfig"
    sed -e "s|@prefix@|/opt/ox|g" -e "s|@OXMPI_VERSION@|$version|g" "$here/mpi.pc.in" >"$S/lib/pkgconfig/mpi.pc"
    expect "pkg-config --libs" "-L/opt/ox/lib -Wl,-rpath,/opt/ox/lib -lmpi" "$(PKG_CONFIG_PATH="$S/lib/pkgconfig" pc --libs mpi)"
    sed -e 's|@prefix@|${pcfiledir}/../..|g' -e "s|@OXMPI_VERSION@|$version|g" "$here/mpi.pc.in" >"$S/lib/pkgconfig/mpi.pc"
    expect "pkg-config relocatable" "-I$S/lib/pkgconfig/../../include" "$(PKG_CONFIG_PATH="$S/lib/pkgconfig" pc --cflags mpi)"
else
    echo "SKIP    pkg-config checks: pkg-config not installed"
fi

# ---- the two wrappers share everything but their settings block ----------------
body() { sed -e '/^# ---- settings/,/^# ---- end of settings/d' "$1"; }
if [ "$(body "$here/mpicc.in")" = "$(body "$here/mpicxx.in")" ]; then
    ok
else
    fail "mpicc.in and mpicxx.in differ outside their settings block"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
