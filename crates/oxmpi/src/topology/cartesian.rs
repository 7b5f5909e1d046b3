//! Cartesian process grids (`MPI_Cart_create`, `MPI_Cart_coords`, `MPI_Cart_rank`,
//! `MPI_Cart_shift`, `MPI_Cart_sub`, `MPI_Cart_get`, `MPI_Dims_create`):
//! [`CartesianCommunicator`], which is also a [`SimpleCommunicator`] (it dereferences
//! to one).

use super::{AsCommId, Communicator, Rank, SimpleCommunicator};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::point_to_point::Count;
use oxmpi_core::comm::CommId;
use oxmpi_core::{commops, topo};
use std::ops::Deref;

/// A communicator whose processes form a grid.
#[derive(Debug, PartialEq, Eq)]
pub struct CartesianCommunicator {
    comm: SimpleCommunicator,
}

/// The shape of a grid and this process's place in it (`MPI_Cart_get`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CartesianLayout {
    /// Extent of each dimension.
    pub dims: Vec<Count>,
    /// Whether each dimension wraps around.
    pub periods: Vec<bool>,
    /// This process's coordinates.
    pub coords: Vec<Count>,
}

/// Fills the zero entries of `dims` so that the product of all entries is `nnodes`,
/// as balanced as possible (`MPI_Dims_create`). Fails with class `MPI_ERR_DIMS` when
/// the non-zero entries do not divide `nnodes`.
pub fn dims_create(nnodes: Count, dims: &mut [Count]) -> Result<()> {
    topo::dims_create(nnodes, dims).map_err(engine("dims_create"))
}

impl SimpleCommunicator {
    /// A grid of `dims` (row-major ranks) over the first processes of this
    /// communicator (`MPI_Cart_create`); `None` at processes beyond the grid.
    /// `periods` says which dimensions wrap; `reorder` may let the library renumber
    /// (oxmpi keeps the ranks). Collective.
    pub fn create_cartesian_communicator(
        &self,
        dims: &[Count],
        periods: &[bool],
        reorder: bool,
    ) -> Result<Option<CartesianCommunicator>> {
        const M: &str = "create_cartesian_communicator";
        if dims.len() != periods.len() {
            return Err(Error::new(
                M,
                ErrorClass::Arg,
                format_args!(
                    "{} dimensions but {} periods (one per dimension)",
                    dims.len(),
                    periods.len()
                ),
            ));
        }
        let r = commops::cart_create(self.comm_id(), dims, periods, reorder).map_err(engine(M))?;
        r.map(|id| CartesianCommunicator::adopt(M, id)).transpose()
    }
}

impl CartesianCommunicator {
    fn adopt(method: &'static str, id: CommId) -> Result<CartesianCommunicator> {
        Ok(CartesianCommunicator {
            comm: SimpleCommunicator::adopt(method, id)?,
        })
    }

    fn cart(&self, method: &'static str) -> Result<topo::Cart> {
        commops::cart_of(self.comm_id())
            .map(|(c, _)| c)
            .map_err(engine(method))
    }

    /// Number of dimensions (`MPI_Cartdim_get`).
    pub fn num_dimensions(&self) -> Result<usize> {
        Ok(self.cart("num_dimensions")?.ndims())
    }

    /// Extents, periodicity and this process's coordinates (`MPI_Cart_get`).
    pub fn get_layout(&self) -> Result<CartesianLayout> {
        const M: &str = "get_layout";
        let c = self.cart(M)?;
        let coords = c.coords_of(self.rank()).map_err(engine(M))?;
        Ok(CartesianLayout {
            dims: c.dims,
            periods: c.periods,
            coords,
        })
    }

    /// The coordinates of `rank` (`MPI_Cart_coords`).
    pub fn rank_to_coordinates(&self, rank: Rank) -> Result<Vec<Count>> {
        const M: &str = "rank_to_coordinates";
        self.cart(M)?.coords_of(rank).map_err(engine(M))
    }

    /// The rank at `coords` (`MPI_Cart_rank`); periodic dimensions wrap, others must be
    /// in range (class `MPI_ERR_ARG`).
    pub fn coordinates_to_rank(&self, coords: &[Count]) -> Result<Rank> {
        const M: &str = "coordinates_to_rank";
        let c = self.cart(M)?;
        if coords.len() != c.ndims() {
            return Err(Error::new(
                M,
                ErrorClass::Arg,
                format_args!(
                    "{} coordinates for a grid of {} dimensions",
                    coords.len(),
                    c.ndims()
                ),
            ));
        }
        c.rank_of(coords).map_err(engine(M))
    }

    /// The processes a shift by `displacement` along `dimension` receives from and
    /// sends to, as (source, destination) (`MPI_Cart_shift`); `None` past the ends of
    /// a dimension that does not wrap.
    pub fn shift(
        &self,
        dimension: Count,
        displacement: Count,
    ) -> Result<(Option<Rank>, Option<Rank>)> {
        const M: &str = "shift";
        let (s, d) = self
            .cart(M)?
            .shift(self.rank(), dimension, displacement)
            .map_err(engine(M))?;
        let some = |r: Rank| (r != crate::PROC_NULL).then_some(r);
        Ok((some(s), some(d)))
    }

    /// The sub-grids that keep the dimensions where `retain` is true
    /// (`MPI_Cart_sub`); this process gets the one it is in. Collective.
    pub fn subgroup(&self, retain: &[bool]) -> Result<CartesianCommunicator> {
        const M: &str = "subgroup";
        let id = commops::cart_sub(self.comm_id(), retain).map_err(engine(M))?;
        CartesianCommunicator::adopt(M, id)
    }
}

impl Deref for CartesianCommunicator {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.comm
    }
}

impl AsCommId for CartesianCommunicator {
    fn comm_id(&self) -> CommId {
        self.comm.comm_id()
    }
}

impl Communicator for CartesianCommunicator {
    fn rank(&self) -> Rank {
        self.comm.rank()
    }

    fn size(&self) -> Rank {
        self.comm.size()
    }
}
