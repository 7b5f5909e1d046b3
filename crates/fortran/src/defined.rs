//! Which C functions `libmpi.so.12` defines, read from `oxmpi-capi`'s sources: a
//! `PMPI_Name` defined by `mpi_fn! { MPI_Name / PMPI_Name ... }`, by the collective
//! macros' `MPI_Name / PMPI_Name` pairs or as `fn PMPI_Name`. The entry points call each
//! function by its module path, and the table's pending (`?`) lines are generated only
//! for functions found here, so a branch that adds a C function brings its Fortran
//! bindings with it.

use crate::api::Func;
use std::collections::BTreeMap;
use std::path::Path;

/// The functions defined in `files` (module path, source text): name without `PMPI_` ->
/// module path (`win`, `coll`, ...).
pub fn scan(files: &[(String, String)]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (module, text) in files {
        let b = text.as_bytes();
        let mut from = 0;
        while let Some(i) = text[from..].find("PMPI_") {
            let at = from + i;
            from = at + 5;
            let end = text[from..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(text.len(), |j| from + j);
            if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
                continue;
            }
            let before = text[..at].trim_end();
            let defines = before.ends_with('/') && !before.ends_with("//")
                || before.ends_with(" fn") && text[at..].len() > 5;
            if defines && end > from {
                out.entry(text[from..end].to_string())
                    .or_insert_with(|| module.clone());
            }
        }
    }
    out
}

/// The `.rs` files under `dir` as (module path, text); `lib.rs` and `mod.rs` name their
/// directory's module.
pub fn sources(dir: &Path) -> std::io::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            walk(&path, &join(prefix, &name), out)?;
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let module = match stem {
                "lib" | "mod" => prefix.to_string(),
                s => join(prefix, s),
            };
            out.push((module, std::fs::read_to_string(&path)?));
        }
    }
    Ok(())
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}::{name}")
    }
}

/// The functions to bind: the table less its pending lines whose C function is not
/// defined yet. A line that is not pending and names an undefined function is an error.
pub fn select(funcs: &[Func], defined: &BTreeMap<String, String>) -> Result<Vec<Func>, String> {
    let mut out = Vec::new();
    for f in funcs {
        if defined.contains_key(&f.name) {
            out.push(f.clone());
        } else if !f.pending {
            return Err(format!(
                "MPI_{0} is in the Fortran table but oxmpi-capi defines no PMPI_{0} \
                 (mark the line `?` while the C function is pending)",
                f.name
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_definitions() {
        let src = "mpi_fn! { MPI_Send / PMPI_Send (b: Ptr) target(x) {\n\
                   coll_fns! { MPI_Bcast / PMPI_Bcast, MPI_Ibcast / PMPI_Ibcast (b: Ptr)\n\
                   pub extern \"C\" fn PMPI_Aint_add(a: MPI_Aint)\n\
                   // see PMPI_Recv\n\
                   unsafe { PMPI_Wait(r) }\n";
        let d = scan(&[("p2p".into(), src.into())]);
        let names: Vec<&str> = d.keys().map(|s| s.as_str()).collect();
        assert_eq!(names, ["Aint_add", "Bcast", "Ibcast", "Send"]);
        assert_eq!(d["Send"], "p2p");
    }
}
