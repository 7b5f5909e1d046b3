//! The API table (`api/mpi.api`): each MPI function with Fortran bindings and the kind
//! of each argument, parsed into [`Func`]s. The table's header says what each kind means.

use std::fmt;

/// What an argument is, independent of direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    Int,
    Aint,
    /// `MPI_Count`: INTEGER(KIND=MPI_COUNT_KIND), the same width as `MPI_Aint` here.
    Count,
    /// A handle of the named class (`Comm`, `Datatype`, ...).
    Handle(&'static str),
    Log,
    Buf,
    Status,
    Str,
    Index,
    Weights,
    Fn,
    Attr,
    Attr4,
    Keyval,
    /// An address-sized C argument that MPI-1's Fortran bindings pass as an INTEGER.
    Aint4,
    /// Attribute copy and delete callbacks in Fortran: `copyfn`/`deletefn` take
    /// INTEGER(KIND=MPI_ADDRESS_KIND) values, `copyfn4`/`deletefn4` (MPI-1) INTEGERs.
    CopyFn {
        wide: bool,
    },
    DeleteFn {
        wide: bool,
    },
    Detach,
    Null,
    /// A callback of `MPI_Grequest_start` written in Fortran (`query`, `free` or
    /// `cancel`): called through a trampoline with Fortran's conventions.
    GrqFn(&'static str),
    /// `MPI_Grequest_start`'s extra state: INTEGER(KIND=MPI_ADDRESS_KIND) in Fortran, kept
    /// by the library with the Fortran callbacks.
    GrqExtra,
    /// `MPI_COMM_SPAWN`'s argv: a CHARACTER array ending in a blank entry, or
    /// `MPI_ARGV_NULL`.
    Argv,
    /// `MPI_COMM_SPAWN_MULTIPLE`'s `array_of_argv(count, *)`, or `MPI_ARGVS_NULL`.
    Argvs,
    /// A CHARACTER array of `count` strings (`array_of_commands`).
    Strs,
    /// An output array of error codes that may be `MPI_ERRCODES_IGNORE`.
    Errcodes,
    /// A `TYPE(MPI_Status)` in both modules (INTEGER(MPI_STATUS_SIZE) with `mpif.h`):
    /// `MPI_STATUS_F082F`'s input, `MPI_STATUS_F2F08`'s output. No sentinel.
    Status08,
    /// An INTEGER(MPI_STATUS_SIZE) in every interface (`mpi_f08` included). No sentinel.
    FStatus,
    /// A C `int` Fortran does not have (passed as 0: `MPI_Info_create_env`'s argc).
    Zero,
    /// A base address the call returns (`MPI_Alloc_mem`, `MPI_Win_allocate`): C writes a
    /// pointer where the argument points; INTEGER(KIND=MPI_ADDRESS_KIND) in `mpif.h`,
    /// either that or `TYPE(C_PTR)` with the `mpi` module, `TYPE(C_PTR)` in `mpi_f08`.
    BasePtr,
}

/// How the argument moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Input, by value in C.
    In,
    /// Output or input-output scalar (C gets a pointer).
    Out,
    /// Input array; `Some(n)`: its length is the value of argument `n` (needed where the
    /// array is converted, not passed through).
    InArray(Option<String>),
    /// Output array; `Some(n)`: its length is the value of argument `n` after the call.
    OutArray(Option<String>),
}

/// An argument's kind: base, mode and, for an output string, the capacity of the C
/// buffer (an `MPI_` constant of mpi.h or the name of an integer argument).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kind {
    pub base: Base,
    pub mode: Mode,
    pub cap: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Arg {
    pub name: String,
    pub kind: Kind,
}

/// What the Fortran procedure returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    /// A subroutine with IERROR last (almost every call).
    Ierror,
    /// `-> double` (`MPI_Wtime`, `MPI_Wtick`): a DOUBLE PRECISION function, no IERROR.
    Double,
    /// `-> aint` (`MPI_Aint_add`, `MPI_Aint_diff`): an INTEGER(KIND=MPI_ADDRESS_KIND)
    /// function, no IERROR.
    Aint,
    /// `-> none` (`MPI_Pcontrol`): a subroutine without IERROR.
    None,
}

/// One MPI function: `name` without the `MPI_` prefix (`Comm_rank`).
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub args: Vec<Arg>,
    pub ret: Ret,
    /// Marked `?` in the table: bindings for a C function another change is adding; they
    /// are generated once `libmpi.so.12` defines `PMPI_Name`, left out until then.
    pub pending: bool,
}

impl Func {
    /// Whether the Fortran procedure is a function (no IERROR, a result).
    pub fn is_function(&self) -> bool {
        matches!(self.ret, Ret::Double | Ret::Aint)
    }

    /// Whether this is a large-count form (`MPI_Send_c`): bound only in `mpi_f08`, as
    /// a specific procedure of the generic name without `_c` (MPI-4.1 section 19.2).
    pub fn is_large_count(&self) -> bool {
        self.name.ends_with("_c")
    }

    /// Whether the Fortran procedure has IERROR.
    pub fn has_ierror(&self) -> bool {
        self.ret == Ret::Ierror
    }

    /// The arguments the Fortran binding has (not the `null` ones), in order.
    pub fn fortran_args(&self) -> impl Iterator<Item = &Arg> {
        self.args
            .iter()
            .filter(|a| !matches!(a.kind.base, Base::Null | Base::Zero))
    }
}

#[derive(Debug)]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "api table line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

const HANDLES: &[&str] = &[
    "Comm",
    "Group",
    "Datatype",
    "Op",
    "Request",
    "Errhandler",
    "Info",
    "Message",
    "Win",
    "Session",
];

fn parse_base(s: &str) -> Option<Base> {
    Some(match s {
        "int" => Base::Int,
        "aint" => Base::Aint,
        "count" => Base::Count,
        "log" => Base::Log,
        "buf" => Base::Buf,
        "status" => Base::Status,
        "str" => Base::Str,
        "index" => Base::Index,
        "weights" => Base::Weights,
        "fn" => Base::Fn,
        "attr" => Base::Attr,
        "attr4" => Base::Attr4,
        "keyval" => Base::Keyval,
        "aint4" => Base::Aint4,
        "copyfn" => Base::CopyFn { wide: true },
        "copyfn4" => Base::CopyFn { wide: false },
        "deletefn" => Base::DeleteFn { wide: true },
        "deletefn4" => Base::DeleteFn { wide: false },
        "detach" => Base::Detach,
        "null" => Base::Null,
        "zero" => Base::Zero,
        "status08" => Base::Status08,
        "fstatus" => Base::FStatus,
        "argv" => Base::Argv,
        "argvs" => Base::Argvs,
        "strs" => Base::Strs,
        "errcodes" => Base::Errcodes,
        "grqquery" => Base::GrqFn("query"),
        "grqfree" => Base::GrqFn("free"),
        "grqcancel" => Base::GrqFn("cancel"),
        "grqextra" => Base::GrqExtra,
        "baseptr" => Base::BasePtr,
        h => Base::Handle(HANDLES.iter().find(|&&n| n == h)?),
    })
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let (base_s, rest) = s.split_at(end);
    let base = parse_base(base_s).ok_or_else(|| format!("unknown kind `{base_s}`"))?;
    let (mode, cap) = match rest {
        "" => (Mode::In, None),
        "[]" => (Mode::InArray(None), None),
        r if r.starts_with('[') && r.ends_with(']') => {
            (Mode::InArray(Some(r[1..r.len() - 1].to_string())), None)
        }
        "*[]" => (Mode::OutArray(None), None),
        r if r.starts_with("*[") && r.ends_with(']') => {
            (Mode::OutArray(Some(r[2..r.len() - 1].to_string())), None)
        }
        "*" => (Mode::Out, None),
        r if r.starts_with('*') && base == Base::Str => (Mode::Out, Some(r[1..].to_string())),
        r => return Err(format!("unknown suffix `{r}` in `{s}`")),
    };
    if base == Base::Str && mode == Mode::Out && cap.is_none() {
        return Err(format!("output string `{s}` needs a capacity (str*CAP)"));
    }
    Ok(Kind { base, mode, cap })
}

/// Parses the whole table.
pub fn parse(text: &str) -> Result<Vec<Func>, ParseError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |msg: String| ParseError { line: i + 1, msg };
        let open = line.find('(').ok_or_else(|| err("missing `(`".into()))?;
        let close = line.rfind(')').ok_or_else(|| err("missing `)`".into()))?;
        let (pending, head) = match line[..open].trim().strip_prefix('?') {
            Some(h) => (true, h.trim()),
            None => (false, line[..open].trim()),
        };
        let name = head.to_string();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(err(format!("bad function name `{name}`")));
        }
        let tail = line[close + 1..].trim();
        let ret = match tail {
            "" => Ret::Ierror,
            "-> double" => Ret::Double,
            "-> aint" => Ret::Aint,
            "-> none" => Ret::None,
            t => return Err(err(format!("unexpected `{t}` after the arguments"))),
        };
        let mut args = Vec::new();
        for a in line[open + 1..close].split(',') {
            let a = a.trim();
            if a.is_empty() {
                continue;
            }
            let (n, k) = a
                .split_once(':')
                .ok_or_else(|| err(format!("argument `{a}` has no kind")))?;
            let kind = parse_kind(k).map_err(err)?;
            args.push(Arg {
                name: n.trim().to_string(),
                kind,
            });
        }
        for a in &args {
            if let Mode::OutArray(Some(n)) | Mode::InArray(Some(n)) = &a.kind.mode {
                if !args.iter().any(|b| &b.name == n) {
                    return Err(err(format!("array length `{n}` is not an argument")));
                }
            }
        }
        if out
            .iter()
            .any(|f: &Func| f.name.eq_ignore_ascii_case(&name))
        {
            return Err(err(format!("`{name}` listed twice")));
        }
        out.push(Func {
            name,
            args,
            ret,
            pending,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kinds() {
        let f = parse("Waitsome(incount: int, r: Request*[], outcount: int*, ix: index*[outcount], st: status*[])\nWtime() -> double\nGet_processor_name(name: str*MPI_MAX_PROCESSOR_NAME, len: int*)").unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].args[1].kind.base, Base::Handle("Request"));
        assert_eq!(f[0].args[1].kind.mode, Mode::OutArray(None));
        assert_eq!(
            f[0].args[3].kind.mode,
            Mode::OutArray(Some("outcount".into()))
        );
        assert_eq!(f[1].ret, Ret::Double);
        assert_eq!(
            f[2].args[0].kind.cap.as_deref(),
            Some("MPI_MAX_PROCESSOR_NAME")
        );
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(parse("Send(buf: bogus)").is_err());
        assert!(parse("Send(buf: buf").is_err());
        assert!(parse("X(a: index*[n])").is_err());
        assert!(parse("X(a: str*)").is_err());
        assert!(parse("X()\nx()").is_err());
    }

    #[test]
    fn the_table_parses() {
        let f = parse(include_str!("../api/mpi.api")).unwrap();
        assert!(f.iter().any(|f| f.name == "Send"));
    }
}
