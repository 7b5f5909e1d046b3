//! Which C functions need a line in the table: every `PMPI_Name` that `oxmpi-capi`
//! defines has Fortran bindings in MPI-4.1 unless [`exclusion`] names a reason it has
//! none. The test `every_c_function_is_bound` fails for a C function that is neither in
//! the table nor excluded, so adding a C function means adding its Fortran line (or an
//! exclusion with its reason) in the same change.

/// Why the C function `name` (without `MPI_`) has no line in the table, or `None` when it
/// needs one.
pub fn exclusion(name: &str) -> Option<&'static str> {
    if name.starts_with("T_") {
        return Some("MPI_T_* has no Fortran binding (MPI-4.1 section 15.3)");
    }
    if name.ends_with("_c2f")
        || name.ends_with("_f2c")
        || name.ends_with("_f082c")
        || name.ends_with("_c2f08")
    {
        // (MPI_Status_f082f / MPI_Status_f2f08 convert between Fortran's two status forms
        // and do have Fortran bindings.)
        return Some("conversions to and from C are C-only (MPI-4.1 section 19.3.4)");
    }
    Some(match name {
        "Register_datarep" => "no MPI-IO in oxmpi",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{api, defined};
    use std::path::Path;

    #[test]
    fn every_c_function_is_bound() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../capi/src");
        let defined = defined::scan(&defined::sources(&dir).unwrap());
        assert!(
            defined.contains_key("Send"),
            "no PMPI_Send found in {dir:?}"
        );
        let table = api::parse(crate::API_TABLE).unwrap();
        let missing: Vec<String> = defined
            .keys()
            .filter(|n| exclusion(n).is_none() && !table.iter().any(|f| &f.name == *n))
            .map(|n| format!("MPI_{n}"))
            .collect();
        assert!(
            missing.is_empty(),
            "C functions with Fortran bindings in MPI-4.1 but no line in api/mpi.api \
             (add one, see docs/ARCHITECTURE.md, or an exclusion with its reason in \
             src/coverage.rs): {}",
            missing.join(" ")
        );
        // Every line the table has for a defined function is bound.
        assert!(defined::select(&table, &defined).is_ok());
    }
}
