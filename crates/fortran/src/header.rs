//! The integer constants of the C header (`crates/capi/include/mpi.h`), read at generation
//! time so that `mpif.h` and the `mpi` module carry the same values as C without a second
//! copy: `#define MPI_X <integer>`, `#define MPI_X ((MPI_Handle)0x...)` and aliases of
//! either. Pointer sentinels, strings and function-like macros are left out (Fortran has
//! its own forms of those).

/// The C handle types that are plain `int`s, plus `MPI_File`, whose Fortran form is an
/// INTEGER too (its null is 0 in both).
const INT_TYPES: &[&str] = &[
    "MPI_Comm",
    "MPI_Group",
    "MPI_Datatype",
    "MPI_Op",
    "MPI_Request",
    "MPI_Message",
    "MPI_Errhandler",
    "MPI_Info",
    "MPI_Win",
    "MPI_Session",
    "MPI_Fint",
    "MPI_File",
];

/// A constant: its name and its value as a Fortran default INTEGER (32-bit two's
/// complement: handles above 2^31 become negative, as in MPICH's mpif.h).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Const {
    pub name: String,
    pub value: i32,
    /// The C handle type the value is cast to (`MPI_Comm`, ...), if any.
    pub ty: Option<String>,
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r.trim()),
        None => (false, s),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else {
        s.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// The value of a `#define` body, if it is an integer constant (maybe cast to an int
/// handle type, maybe parenthesised), and the type of the cast.
fn value_of(body: &str) -> Option<(i64, Option<String>)> {
    let mut s = body.trim();
    let mut cast = None;
    loop {
        if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            s = inner.trim();
            continue;
        }
        // A cast: `(MPI_Comm)0x44000000`.
        if let Some(r) = s.strip_prefix('(') {
            let close = r.find(')')?;
            let ty = r[..close].trim();
            if !INT_TYPES.contains(&ty) {
                return None;
            }
            cast = Some(ty.to_string());
            s = r[close + 1..].trim();
            continue;
        }
        break;
    }
    Some((parse_int(s)?, cast))
}

/// Every integer constant of the header, in header order. Aliases (`#define MPI_A MPI_B`)
/// take the value of what they name.
pub fn constants(header: &str) -> Vec<Const> {
    let mut out: Vec<Const> = Vec::new();
    for line in header.lines() {
        let Some(rest) = line.trim_start().strip_prefix("#define") else {
            continue;
        };
        let rest = rest.trim_start();
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, body) = rest.split_at(name_end);
        // Function-like macros have `(` right after the name.
        if !name.starts_with("MPI_") || body.starts_with('(') {
            continue;
        }
        let body = body.split("/*").next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let (value, ty) = match value_of(body) {
            Some(v) => v,
            None => match out.iter().find(|c| c.name == body) {
                Some(c) => (i64::from(c.value), c.ty.clone()),
                None => continue,
            },
        };
        // Only the int handle types are handles in Fortran.
        let ty = ty.filter(|t| t != "MPI_Fint");
        // A 32-bit pattern (handles) or a value that fits an INTEGER.
        let value = if (0..=i64::from(u32::MAX)).contains(&value) {
            value as u32 as i32
        } else if let Ok(v) = i32::try_from(value) {
            v
        } else {
            continue;
        };
        if let Some(c) = out.iter_mut().find(|c| c.name == name) {
            c.value = value;
            c.ty = ty;
        } else {
            out.push(Const {
                name: name.to_string(),
                value,
                ty,
            });
        }
    }
    out
}

/// The value of one constant.
pub fn lookup(consts: &[Const], name: &str) -> Option<i32> {
    consts.iter().find(|c| c.name == name).map(|c| c.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_forms_of_the_header() {
        let h = "#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)\n\
                 #define MPI_FLOAT_INT ((MPI_Datatype)0x8c000000)\n\
                 #define MPI_UNDEFINED (-32766)\n\
                 #define MPI_MAX_PROCESSOR_NAME 128 /* bytes */\n\
                 #define MPI_LONG_LONG MPI_UNDEFINED\n\
                 #define MPI_BOTTOM ((void *)0)\n\
                 #define MPI_Comm_c2f(h) ((MPI_Fint)(h))\n\
                 #define MPI_AINT_FMT_DEC_SPEC \"%ld\"\n\
                 #define MPI_FILE_NULL ((MPI_File)0)\n";
        let c = constants(h);
        let names: Vec<_> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "MPI_COMM_WORLD",
                "MPI_FLOAT_INT",
                "MPI_UNDEFINED",
                "MPI_MAX_PROCESSOR_NAME",
                "MPI_LONG_LONG",
                "MPI_FILE_NULL"
            ]
        );
        assert_eq!(lookup(&c, "MPI_COMM_WORLD"), Some(0x4400_0000));
        assert_eq!(lookup(&c, "MPI_FLOAT_INT"), Some(0x8c00_0000_u32 as i32));
        assert_eq!(lookup(&c, "MPI_LONG_LONG"), Some(-32766));
        assert_eq!(lookup(&c, "MPI_MAX_PROCESSOR_NAME"), Some(128));
        assert_eq!(c[0].ty.as_deref(), Some("MPI_Comm"));
        assert_eq!(c[3].ty, None);
        assert_eq!(c[5].ty.as_deref(), Some("MPI_File"));
    }

    #[test]
    fn reads_the_real_header() {
        let c = constants(include_str!("../../capi/include/mpi.h"));
        assert_eq!(lookup(&c, "MPI_INTEGER"), Some(0x4c00_041b));
        assert_eq!(lookup(&c, "MPI_ERR_RANK"), Some(6));
        assert_eq!(lookup(&c, "MPI_F_STATUS_SIZE"), Some(5));
        assert!(lookup(&c, "MPI_BOTTOM").is_none());
    }
}
