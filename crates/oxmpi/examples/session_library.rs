//! A library that initialises MPI through a session, inside a program that also uses
//! the world model: the library never touches `MPI_COMM_WORLD`, the program never sees
//! the library's communicator, and their messages cannot mix.
//!
//! Run: `mpiexec -n 4 target/release/examples/session_library`.

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;

/// A library with its own MPI: a session and a communicator over every process.
mod library {
    use oxmpi::collective::SystemOperation;
    use oxmpi::session::Session;
    use oxmpi::topology::SimpleCommunicator;
    use oxmpi::traits::*;

    pub struct Library {
        // Dropped before the session that it comes from.
        comm: SimpleCommunicator,
        _session: Session,
    }

    impl Library {
        /// Collective over every process of the job.
        pub fn new() -> Result<Library, oxmpi::Error> {
            let session = Session::init()?;
            let group = session.group("mpi://WORLD")?;
            let comm = SimpleCommunicator::from_group(&group, "org.oxmpi.example.library")?;
            Ok(Library {
                comm,
                _session: session,
            })
        }

        /// The sum of every process's `x` (collective).
        pub fn total(&self, x: i64) -> Result<i64, oxmpi::Error> {
            let mut sum = 0i64;
            self.comm
                .all_reduce_into(&x, &mut sum, SystemOperation::sum())?;
            Ok(sum)
        }
    }
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());

    let lib = library::Library::new()?;
    // The program's own traffic on the world, the library's on its communicator.
    let mut world_sum = 0i32;
    world.all_reduce_into(&rank, &mut world_sum, SystemOperation::sum())?;
    let lib_sum = lib.total(10 * rank as i64)?;
    drop(lib);

    if rank == 0 {
        println!("world sum {world_sum}, library sum {lib_sum} on {size} ranks");
    }
    Ok(())
}
