//! `oxmpi-fortran-gen mpif.h|mpi.f90|mpi_f08.f90|mpich_f08.f90 <mpi.h> [<api table>]`: writes the file named to
//! standard output (staging runs it; see scripts/stage). The functions bound are those of
//! the table that `oxmpi-capi` defines, read from its sources next to `<mpi.h>`
//! (`<mpi.h>/../../src`), as the entry points in the library are.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 || args.len() > 4 {
        eprintln!("usage: oxmpi-fortran-gen mpif.h|mpi.f90|mpi_f08.f90|mpich_f08.f90 <mpi.h> [<api table>]");
        return ExitCode::from(2);
    }
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let run = || -> Result<String, String> {
        let consts = oxmpi_fortran::header::constants(&read(&args[2])?);
        let table = match args.get(3) {
            Some(p) => read(p)?,
            None => oxmpi_fortran::API_TABLE.to_string(),
        };
        let funcs = oxmpi_fortran::api::parse(&table).map_err(|e| e.to_string())?;
        let src = std::path::Path::new(&args[2])
            .parent()
            .and_then(|p| p.parent())
            .map(|p| p.join("src"))
            .ok_or("no directory above mpi.h")?;
        let sources =
            oxmpi_fortran::defined::sources(&src).map_err(|e| format!("{}: {e}", src.display()))?;
        let defined = oxmpi_fortran::defined::scan(&sources);
        let funcs = oxmpi_fortran::defined::select(&funcs, &defined)?;
        match args[1].as_str() {
            "mpif.h" => Ok(oxmpi_fortran::fortran::mpif_h(&consts)),
            "mpi.f90" => Ok(oxmpi_fortran::fortran::mpi_module(&consts, &funcs)),
            "mpi_f08.f90" => Ok(oxmpi_fortran::fortran::mpi_f08_module(&consts, &funcs)),
            "mpich_f08.f90" => Ok(oxmpi_fortran::mpich_f08::source(&funcs)),
            other => Err(format!(
                "unknown output `{other}` (mpif.h, mpi.f90, mpi_f08.f90 or mpich_f08.f90)"
            )),
        }
    };
    match run() {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("oxmpi-fortran-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
