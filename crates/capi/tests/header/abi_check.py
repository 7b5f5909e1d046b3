#!/usr/bin/env python3
"""Check that oxmpi's mpi.h is a drop-in replacement for MPICH's.

The reference header is only read through the C compiler: its macro table
(`cc -dM -E`) and its preprocessed text (`cc -E -P`). From those this script
collects every MPI name MPICH defines -- constants (macros, enumerators and
exported variables), function-like macros, typedefs and function prototypes --
then writes C programs that print, for each name, its type and value. The same
program is compiled once against each header and the outputs are compared
line by line. Prototypes and callback types are compared with
`__builtin_types_compatible_p` against the parameter lists MPICH declares.

Nothing here links against an MPI library: every expression that would need
a symbol (MPI_DUP_FN, MPI_UNWEIGHTED, the functions) is only used in
unevaluated contexts (`_Generic` selectors, `__typeof__`).

Exit status 0 when everything matches, 1 on any mismatch, 2 on a usage or
tool failure. The last line is always `N passed, M failed`.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

# Names whose value differs from MPICH's on purpose, with the reason.
VALUE_EXCEPTIONS = {
    "MPI_SUBVERSION": "oxmpi claims MPI 4.1, as MPICH 4.1 and later do (MPICH 4.0.2 claims 4.0)",
}

# MPICH names oxmpi does not provide on purpose, with the reason.
ABSENT_EXCEPTIONS = {
    "MPI_PROTO_H_INCLUDED": "include guard of MPICH's mpi_proto.h, not an MPI name",
}


def omitted_by_design(name):
    """Every MPI name MPICH declares is checked (the tool information interface
    included)."""
    return False


def is_mpi_name(name):
    return (name.startswith("MPI_") or name.startswith("PMPI_")) and not omitted_by_design(name)


def run(cmd, **kw):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if proc.returncode != 0:
        sys.stderr.write("command failed: %s\n%s" % (" ".join(cmd), proc.stderr[-4000:]))
        raise SystemExit(2)
    return proc.stdout


def strip_attributes(text):
    """Remove every __attribute__((...)), whatever its nesting depth."""
    out = []
    i = 0
    key = "__attribute__"
    while True:
        j = text.find(key, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.find("(", j)
        depth = 0
        while k < len(text):
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


class Header:
    """What one mpi.h declares, as seen by the compiler."""

    def __init__(self, cc, include_dir, workdir, tag):
        self.include_dir = include_dir
        tu = os.path.join(workdir, "scan_%s.c" % tag)
        with open(tu, "w") as f:
            f.write("#include <mpi.h>\n")
        base = [cc, "-std=c11", "-I", include_dir]
        self.macros = {}  # name -> (params or None, body)
        for line in run(base + ["-dM", "-E", tu]).splitlines():
            m = re.match(r"#define (\w+)(\([^)]*\))? ?(.*)$", line)
            if m and is_mpi_name(m.group(1)):
                self.macros[m.group(1)] = (m.group(2), m.group(3).strip())
        text = strip_attributes(run(base + ["-E", "-P", tu]))
        self.enumerators = set()
        self.structs = {}  # typedef name -> [field names]
        self.functions = {}  # name -> (return type, parameter text)
        self.variables = {}  # name -> declaration
        self.typedefs = {}  # name -> ("func", ret, params) | ("alias", target) | ("plain", text)

        def enum_body(m):
            if m.group(1).startswith("QMPI_"):
                return "enum "  # MPICH's own tool interface (QMPI), not MPI
            for item in m.group(2).split(","):
                ident = item.split("=")[0].strip()
                if ident and is_mpi_name(ident):
                    self.enumerators.add(ident)
            return "enum "

        text = re.sub(r"enum\s*(\w*)\s*\{([^{}]*)\}", enum_body, text)

        def struct_body(m):
            fields = [f.split()[-1] for f in m.group(1).split(";") if f.strip()]
            self.structs[m.group(2)] = fields
            return "typedef struct __oxmpi_struct %s" % m.group(2)

        text = re.sub(r"typedef\s+struct\s*\w*\s*\{([^{}]*)\}\s*(\w+)", struct_body, text)
        text = re.sub(r"struct\s*\w*\s*\{[^{}]*\}", "struct __oxmpi_other", text)

        for decl in text.split(";"):
            d = " ".join(decl.split())
            if not d:
                continue
            m = re.match(r"^typedef (.+?) ?\( ?\*? ?(\w+) ?\) ?\((.*)\)$", d) or re.match(
                r"^typedef ([\w ]+?\**) ?(\w+) ?\((.*)\)$", d
            )
            if m:
                if is_mpi_name(m.group(2)):
                    self.typedefs[m.group(2)] = ("func", m.group(1).strip(), m.group(3).strip())
                continue
            m = re.match(r"^typedef (.+?) ?(\w+)$", d)
            if m:
                if is_mpi_name(m.group(2)):
                    self.typedefs[m.group(2)] = ("plain", m.group(1).strip())
                continue
            m = re.match(r"^(?:extern )?([\w ]+?\**) ?(\w+) ?\((.*)\)$", d)
            if m:
                if is_mpi_name(m.group(2)) or m.group(2).startswith("MPIR_"):
                    self.functions[m.group(2)] = (m.group(1).strip(), m.group(3).strip())
                continue
            m = re.match(r"^extern (.+?) ?(\w+)$", d)
            if m and is_mpi_name(m.group(2)):
                self.variables[m.group(2)] = d
        for name, kind in list(self.typedefs.items()):
            if kind[0] == "plain" and (kind[1] in self.typedefs) and self.typedefs[kind[1]][0] == "func":
                self.typedefs[name] = ("alias", kind[1])

    def constants(self):
        """Object-like macros, enumerators and exported variables."""
        names = {n for n, (params, _) in self.macros.items() if params is None}
        return names | self.enumerators | set(self.variables)

    def function_macros(self):
        return {n for n, (params, _) in self.macros.items() if params is not None}

    def needs_link(self, name, seen=None):
        """True when the constant's value is an address the linker provides."""
        if name in self.variables or name in self.functions:
            return True
        if name not in self.macros:
            return False
        seen = seen or set()
        if name in seen:
            return False
        seen.add(name)
        for ident in re.findall(r"[A-Za-z_]\w*", self.macros[name][1]):
            if ident in self.functions or ident in self.variables:
                return True
            if ident in self.macros and self.needs_link(ident, seen):
                return True
        return False


PRELUDE = r"""
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*ox_copy_fn)(int, int, void *, void *, void *, int *);
typedef int (*ox_delete_fn)(int, int, void *, void *);
typedef int (*ox_conv_fn)(void *, int, int, void *, long, void *);
typedef int (*ox_conv_c_fn)(void *, int, long, void *, long, void *);

#define OX_TYPE(x) _Generic((x), \
    int: "int", unsigned int: "unsigned int", long: "long", unsigned long: "unsigned long", \
    long long: "long long", unsigned long long: "unsigned long long", \
    char *: "char*", const char *: "const char*", void *: "void*", int *: "int*", \
    char **: "char**", char ***: "char***", MPI_Status *: "MPI_Status*", \
    MPI_F08_status *: "MPI_F08_status*", MPI_Status: "MPI_Status", \
    MPI_F08_status: "MPI_F08_status", MPI_File: "MPI_File", \
    ox_copy_fn: "copy-callback*", ox_delete_fn: "delete-callback*", \
    ox_conv_fn: "datarep-conversion*", ox_conv_c_fn: "datarep-conversion-c*", \
    default: "(other)")

static void ox_str(const char *s) { printf("\"%s\"", s); }
static void ox_int(long long v) { printf("%lld", v); }
#define OX_VAL(x) _Generic((x), \
    char *: ox_str((const char *)(uintptr_t)(x)), \
    const char *: ox_str((const char *)(uintptr_t)(x)), \
    default: ox_int((long long)(uintptr_t)(x)))

int main(void) {
"""


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def value_program(ref, names_const, names_fmacro, typedef_names):
    """One program: prints a line per check, identical for both headers when
    the headers agree."""
    lines = [PRELUDE]
    for name in sorted(names_const):
        if name in ref.macros and ref.macros[name][1] == "":
            lines.append('    puts("%s defined");' % name)
        elif ref.needs_link(name):
            lines.append('    printf("%%s type=%%s value=<link-time address>\\n", %s, OX_TYPE(%s));' % (c_string(name), name))
        else:
            lines.append(
                '    printf("%%s type=%%s value=", %s, OX_TYPE(%s)); OX_VAL(%s); putchar(10);' % (c_string(name), name, name)
            )
    for name in sorted(names_fmacro):
        lines.append(
            '    printf("%%s(12345) type=%%s value=", %s, OX_TYPE(%s(12345))); OX_VAL(%s(12345)); putchar(10);'
            % (c_string(name), name, name)
        )
    for name in sorted(typedef_names):
        kind = ref.typedefs[name]
        if kind[0] == "plain":
            lines.append(
                '    printf("typedef %%s is %%s size=%%d align=%%d\\n", %s, OX_TYPE(*(%s *)0), (int)sizeof(%s), (int)_Alignof(%s));'
                % (c_string(name), name, name, name)
            )
            for field in ref.structs.get(name, []):
                lines.append(
                    '    printf("field %%s.%%s offset=%%d\\n", %s, %s, (int)offsetof(%s, %s));'
                    % (c_string(name), c_string(field), name, field)
                )
    lines.append("    return 0;\n}\n")
    return "\n".join(lines)


def compat_program(ref, func_typedefs, alias_typedefs, functions):
    """Prints `ok NAME` or `MISMATCH NAME` for each callback type and function,
    comparing the header under test with MPICH's declarations."""
    lines = [PRELUDE]
    for name in sorted(func_typedefs):
        _, ret, params = ref.typedefs[name]
        lines.append(
            '    puts(__builtin_types_compatible_p(%s *, %s (*)(%s)) ? "ok typedef %s" : "MISMATCH typedef %s");'
            % (name, ret, params, name, name)
        )
    for name in sorted(alias_typedefs):
        target = ref.typedefs[name][1]
        lines.append(
            '    puts(__builtin_types_compatible_p(%s, %s) ? "ok typedef %s" : "MISMATCH typedef %s");'
            % (name, target, name, name)
        )
    for name in sorted(functions):
        ret, params = ref.functions[name]
        lines.append(
            '    puts(__builtin_types_compatible_p(__typeof__(&%s), %s (*)(%s)) ? "ok function %s" : "MISMATCH function %s");'
            % (name, ret, params, name, name)
        )
    lines.append("    return 0;\n}\n")
    return "\n".join(lines)


def twin_program(ours):
    """Our own header: every MPI_ function has a PMPI_ twin of the same type."""
    lines = [PRELUDE]
    for name in sorted(ours.functions):
        if name.startswith("MPI_") and ("P" + name) in ours.functions:
            lines.append(
                '    puts(__builtin_types_compatible_p(__typeof__(&%s), __typeof__(&P%s)) ? "ok twin %s" : "MISMATCH twin %s");'
                % (name, name, name, name)
            )
    lines.append("    return 0;\n}\n")
    return "\n".join(lines)


def build_and_run(cc, include_dir, source, workdir, tag):
    src = os.path.join(workdir, tag + ".c")
    exe = os.path.join(workdir, tag)
    with open(src, "w") as f:
        f.write(source)
    run([cc, "-std=c11", "-w", "-I", include_dir, src, "-o", exe])
    return run([exe]).splitlines()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--mpich-include", required=True, help="directory holding MPICH's mpi.h")
    ap.add_argument("--ours-include", required=True, help="directory holding oxmpi's mpi.h")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every passing check too")
    args = ap.parse_args()

    passed = 0
    failed = 0

    def ok(msg):
        nonlocal passed
        passed += 1
        if args.verbose:
            print("ok      " + msg)

    def fail(msg):
        nonlocal failed
        failed += 1
        print("FAIL    " + msg)

    with tempfile.TemporaryDirectory(prefix="oxmpi-header-") as work:
        ref = Header(args.cc, args.mpich_include, work, "mpich")
        ours = Header(args.cc, args.ours_include, work, "ours")

        # 1. Presence of every name.
        ref_const = ref.constants()
        our_const = ours.constants() | set(ours.functions)
        ref_fmacro = ref.function_macros()
        our_fmacro = ours.function_macros() | set(ours.functions)
        ref_funcs = {n for n in ref.functions if is_mpi_name(n)}
        present_const, present_fmacro, present_funcs, present_types = set(), set(), set(), set()
        for name in sorted(ref_const | ref_fmacro | ref_funcs | set(ref.typedefs)):
            if name in ABSENT_EXCEPTIONS:
                print("skip    %s: %s" % (name, ABSENT_EXCEPTIONS[name]))
                continue
            if name in ref.typedefs:
                if name in ours.typedefs:
                    present_types.add(name)
                else:
                    fail("typedef %s is missing" % name)
            elif name in ref_funcs:
                if name in ours.functions:
                    present_funcs.add(name)
                else:
                    fail("function %s is missing" % name)
            elif name in ref_fmacro:
                if name in our_fmacro:
                    present_fmacro.add(name)
                else:
                    fail("macro %s(...) is missing" % name)
            elif name in our_const:
                present_const.add(name)
            else:
                fail("constant %s is missing" % name)

        # 2. Values and types of constants, function-like macros, plain typedefs.
        plain_types = {n for n in present_types if ref.typedefs[n][0] == "plain"}
        prog = value_program(ref, present_const, present_fmacro, plain_types)
        ref_out = build_and_run(args.cc, args.mpich_include, prog, work, "values_mpich")
        our_out = build_and_run(args.cc, args.ours_include, prog, work, "values_ours")
        if len(ref_out) != len(our_out):
            fail("value programs printed different numbers of lines")
        for a, b in zip(ref_out, our_out):
            name = a.split(" ")[0] if not a.startswith(("typedef ", "field ")) else a.split(" ")[1]
            if a == b:
                ok(a)
            elif name in VALUE_EXCEPTIONS:
                print("skip    %s (ours: %s): %s" % (a, b, VALUE_EXCEPTIONS[name]))
            else:
                fail("MPICH: %s | oxmpi: %s" % (a, b))

        # 3. Callback typedefs and prototypes, against MPICH's declarations.
        func_types = {n for n in present_types if ref.typedefs[n][0] == "func"}
        alias_types = {n for n in present_types if ref.typedefs[n][0] == "alias"}
        prog = compat_program(ref, func_types, alias_types, present_funcs)
        for line in build_and_run(args.cc, args.ours_include, prog, work, "compat_ours"):
            (ok if line.startswith("ok ") else fail)(line)
        # The same program against MPICH proves the comparison itself is sound.
        for line in build_and_run(args.cc, args.mpich_include, prog, work, "compat_mpich"):
            if not line.startswith("ok "):
                fail("self-check against MPICH: " + line)

        # 4. Our own consistency: MPI_ and PMPI_ twins.
        for name in sorted(ours.functions):
            if name.startswith("MPI_") and ("P" + name) not in ours.functions:
                fail("%s has no PMPI_ twin" % name)
            if name.startswith("PMPI_") and name[1:] not in ours.functions:
                fail("%s has no MPI_ twin" % name)
        for line in build_and_run(args.cc, args.ours_include, twin_program(ours), work, "twins_ours"):
            (ok if line.startswith("ok ") else fail)(line)

        # 5. Names we define that MPICH does not (informational).
        extra = sorted(
            (ours.constants() | set(ours.functions) | set(ours.typedefs) | ours.function_macros())
            - (ref.constants() | set(ref.functions) | set(ref.typedefs) | ref.function_macros())
        )
        for name in extra:
            print("extra   %s (not in MPICH's header)" % name)

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
