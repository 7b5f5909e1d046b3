//! Decoding a type back into its constructor: `MPI_Type_get_envelope` and
//! `MPI_Type_get_contents`, with the combiner names of the standard and the
//! numeric values of MPICH 4.0.2's `mpi.h`.

use crate::datatype::{Datatype, Kind};

/// The constructor that made a type (`MPI_COMBINER_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    /// Fortran's MPI-1 `MPI_TYPE_HVECTOR`; never produced by this crate.
    HvectorInteger,
    Hvector,
    Indexed,
    /// Fortran's MPI-1 `MPI_TYPE_HINDEXED`; never produced by this crate.
    HindexedInteger,
    Hindexed,
    IndexedBlock,
    /// Fortran's MPI-1 `MPI_TYPE_STRUCT`; never produced by this crate.
    StructInteger,
    Struct,
    Subarray,
    Darray,
    F90Real,
    F90Complex,
    F90Integer,
    Resized,
    HindexedBlock,
}

impl Combiner {
    /// Every combiner, in MPICH's numbering order.
    pub const ALL: [Combiner; 19] = [
        Combiner::Named,
        Combiner::Dup,
        Combiner::Contiguous,
        Combiner::Vector,
        Combiner::HvectorInteger,
        Combiner::Hvector,
        Combiner::Indexed,
        Combiner::HindexedInteger,
        Combiner::Hindexed,
        Combiner::IndexedBlock,
        Combiner::StructInteger,
        Combiner::Struct,
        Combiner::Subarray,
        Combiner::Darray,
        Combiner::F90Real,
        Combiner::F90Complex,
        Combiner::F90Integer,
        Combiner::Resized,
        Combiner::HindexedBlock,
    ];

    /// The value of `MPI_COMBINER_*` in MPICH 4.0.2's `mpi.h` (1 = NAMED ... 19 = HINDEXED_BLOCK).
    pub const fn combiner_mpich_value(self) -> i32 {
        match self {
            Combiner::Named => 1,
            Combiner::Dup => 2,
            Combiner::Contiguous => 3,
            Combiner::Vector => 4,
            Combiner::HvectorInteger => 5,
            Combiner::Hvector => 6,
            Combiner::Indexed => 7,
            Combiner::HindexedInteger => 8,
            Combiner::Hindexed => 9,
            Combiner::IndexedBlock => 10,
            Combiner::StructInteger => 11,
            Combiner::Struct => 12,
            Combiner::Subarray => 13,
            Combiner::Darray => 14,
            Combiner::F90Real => 15,
            Combiner::F90Complex => 16,
            Combiner::F90Integer => 17,
            Combiner::Resized => 18,
            Combiner::HindexedBlock => 19,
        }
    }

    /// The combiner with an MPICH value, if any.
    pub fn from_mpich(value: i32) -> Option<Combiner> {
        Combiner::ALL
            .iter()
            .copied()
            .find(|c| c.combiner_mpich_value() == value)
    }

    /// The constant's name, e.g. `"MPI_COMBINER_VECTOR"`.
    pub const fn name(self) -> &'static str {
        match self {
            Combiner::Named => "MPI_COMBINER_NAMED",
            Combiner::Dup => "MPI_COMBINER_DUP",
            Combiner::Contiguous => "MPI_COMBINER_CONTIGUOUS",
            Combiner::Vector => "MPI_COMBINER_VECTOR",
            Combiner::HvectorInteger => "MPI_COMBINER_HVECTOR_INTEGER",
            Combiner::Hvector => "MPI_COMBINER_HVECTOR",
            Combiner::Indexed => "MPI_COMBINER_INDEXED",
            Combiner::HindexedInteger => "MPI_COMBINER_HINDEXED_INTEGER",
            Combiner::Hindexed => "MPI_COMBINER_HINDEXED",
            Combiner::IndexedBlock => "MPI_COMBINER_INDEXED_BLOCK",
            Combiner::StructInteger => "MPI_COMBINER_STRUCT_INTEGER",
            Combiner::Struct => "MPI_COMBINER_STRUCT",
            Combiner::Subarray => "MPI_COMBINER_SUBARRAY",
            Combiner::Darray => "MPI_COMBINER_DARRAY",
            Combiner::F90Real => "MPI_COMBINER_F90_REAL",
            Combiner::F90Complex => "MPI_COMBINER_F90_COMPLEX",
            Combiner::F90Integer => "MPI_COMBINER_F90_INTEGER",
            Combiner::Resized => "MPI_COMBINER_RESIZED",
            Combiner::HindexedBlock => "MPI_COMBINER_HINDEXED_BLOCK",
        }
    }
}

/// What `MPI_Type_get_envelope` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub combiner: Combiner,
    pub num_integers: usize,
    pub num_addresses: usize,
    /// Counts and displacements given as `MPI_Count` (types made by a `_c` constructor).
    pub num_large_counts: usize,
    pub num_datatypes: usize,
}

/// What `MPI_Type_get_contents` returns, in the standard's order for the combiner.
/// Enumerated arguments (order, distributions) are given as MPICH's constant values;
/// `MPI_DISTRIBUTE_DFLT_DARG` stays as given. Values are `i64`: the C binding checks
/// that they fit its `int`s.
#[derive(Clone, Debug)]
pub struct Contents {
    pub integers: Vec<i64>,
    pub addresses: Vec<i64>,
    /// The `MPI_Count` arguments of a large-count constructor, in argument order.
    pub large_counts: Vec<i64>,
    pub datatypes: Vec<Datatype>,
}

impl Datatype {
    /// The combiner that made this type.
    pub fn combiner(&self) -> Combiner {
        if let Some(f) = self.0.f90 {
            return f.combiner();
        }
        match self.kind() {
            Kind::Named(_) => Combiner::Named,
            Kind::Dup(_) => Combiner::Dup,
            Kind::Contiguous { .. } => Combiner::Contiguous,
            Kind::Vector { .. } => Combiner::Vector,
            Kind::Hvector { .. } => Combiner::Hvector,
            Kind::Indexed { .. } => Combiner::Indexed,
            Kind::Hindexed { .. } => Combiner::Hindexed,
            Kind::IndexedBlock { .. } => Combiner::IndexedBlock,
            Kind::HindexedBlock { .. } => Combiner::HindexedBlock,
            Kind::Struct { .. } => Combiner::Struct,
            Kind::Resized { .. } => Combiner::Resized,
            Kind::Subarray { .. } => Combiner::Subarray,
            Kind::Darray { .. } => Combiner::Darray,
        }
    }

    /// `MPI_Type_get_envelope` (`_c`: a type made by a large-count constructor reports
    /// its counts and displacements as large counts).
    pub fn envelope(&self) -> Envelope {
        if self.has_large_counts() {
            let c = self.contents().expect("a large-count type is derived");
            return Envelope {
                combiner: self.combiner(),
                num_integers: c.integers.len(),
                num_addresses: c.addresses.len(),
                num_large_counts: c.large_counts.len(),
                num_datatypes: c.datatypes.len(),
            };
        }
        if let Some(f) = self.0.f90 {
            return Envelope {
                combiner: f.combiner(),
                num_integers: f.integers().len(),
                num_addresses: 0,
                num_large_counts: 0,
                num_datatypes: 0,
            };
        }
        let (ni, na, nd) = match self.kind() {
            Kind::Named(_) => (0, 0, 0),
            Kind::Dup(_) => (0, 0, 1),
            Kind::Contiguous { .. } => (1, 0, 1),
            Kind::Vector { .. } => (3, 0, 1),
            Kind::Hvector { .. } => (2, 1, 1),
            Kind::Indexed { blocklengths, .. } => (2 * blocklengths.len() + 1, 0, 1),
            Kind::Hindexed { blocklengths, .. } => (blocklengths.len() + 1, blocklengths.len(), 1),
            Kind::IndexedBlock { displacements, .. } => (displacements.len() + 2, 0, 1),
            Kind::HindexedBlock { displacements, .. } => (2, displacements.len(), 1),
            Kind::Struct { blocklengths, .. } => {
                let n = blocklengths.len();
                (n + 1, n, n)
            }
            Kind::Resized { .. } => (0, 2, 1),
            Kind::Subarray { sizes, .. } => (3 * sizes.len() + 2, 0, 1),
            Kind::Darray { gsizes, .. } => (4 * gsizes.len() + 4, 0, 1),
        };
        Envelope {
            combiner: self.combiner(),
            num_integers: ni,
            num_addresses: na,
            num_large_counts: 0,
            num_datatypes: nd,
        }
    }

    /// `MPI_Type_get_contents`; `None` for predefined types (the standard makes that
    /// call erroneous).
    pub fn contents(&self) -> Option<Contents> {
        if let Some(f) = self.0.f90 {
            return Some(Contents {
                integers: f.integers(),
                addresses: Vec::new(),
                large_counts: Vec::new(),
                datatypes: Vec::new(),
            });
        }
        let len = |v: &[i64]| v.len() as i64;
        let (integers, addresses, datatypes): (Vec<i64>, Vec<i64>, Vec<Datatype>) = match self
            .kind()
        {
            Kind::Named(_) => return None,
            Kind::Dup(old) => (vec![], vec![], vec![old.clone()]),
            Kind::Contiguous { count, old } => (vec![*count], vec![], vec![old.clone()]),
            Kind::Vector {
                count,
                blocklength,
                stride,
                old,
            } => (
                vec![*count, *blocklength, *stride],
                vec![],
                vec![old.clone()],
            ),
            Kind::Hvector {
                count,
                blocklength,
                stride,
                old,
            } => (vec![*count, *blocklength], vec![*stride], vec![old.clone()]),
            Kind::Indexed {
                blocklengths,
                displacements,
                old,
            } => {
                let mut ints = vec![len(blocklengths)];
                ints.extend_from_slice(blocklengths);
                ints.extend_from_slice(displacements);
                (ints, vec![], vec![old.clone()])
            }
            Kind::Hindexed {
                blocklengths,
                displacements,
                old,
            } => {
                let mut ints = vec![len(blocklengths)];
                ints.extend_from_slice(blocklengths);
                (ints, displacements.to_vec(), vec![old.clone()])
            }
            Kind::IndexedBlock {
                blocklength,
                displacements,
                old,
            } => {
                let mut ints = vec![len(displacements), *blocklength];
                ints.extend_from_slice(displacements);
                (ints, vec![], vec![old.clone()])
            }
            Kind::HindexedBlock {
                blocklength,
                displacements,
                old,
            } => (
                vec![len(displacements), *blocklength],
                displacements.to_vec(),
                vec![old.clone()],
            ),
            Kind::Struct {
                blocklengths,
                displacements,
                types,
            } => {
                let mut ints = vec![len(blocklengths)];
                ints.extend_from_slice(blocklengths);
                (ints, displacements.to_vec(), types.to_vec())
            }
            Kind::Resized { lb, extent, old } => (vec![], vec![*lb, *extent], vec![old.clone()]),
            Kind::Subarray {
                sizes,
                subsizes,
                starts,
                order,
                old,
                ..
            } => {
                let mut ints = vec![len(sizes)];
                ints.extend_from_slice(sizes);
                ints.extend_from_slice(subsizes);
                ints.extend_from_slice(starts);
                ints.push(i64::from(order.mpich_value()));
                (ints, vec![], vec![old.clone()])
            }
            Kind::Darray {
                size,
                rank,
                gsizes,
                distribs,
                dargs,
                psizes,
                order,
                old,
                ..
            } => {
                let mut ints = vec![*size, *rank, len(gsizes)];
                ints.extend_from_slice(gsizes);
                ints.extend(distribs.iter().map(|d| i64::from(d.mpich_value())));
                ints.extend_from_slice(dargs);
                ints.extend_from_slice(psizes);
                ints.push(i64::from(order.mpich_value()));
                (ints, vec![], vec![old.clone()])
            }
        };
        let mut c = Contents {
            integers,
            addresses,
            large_counts: Vec::new(),
            datatypes,
        };
        if self.has_large_counts() {
            c.move_to_large_counts(self.kind());
        }
        Some(c)
    }
}

impl Contents {
    /// Regroups the arguments of a type made by a large-count constructor as MPI-4.1
    /// (section 5.1.13) decodes them: every count, block length, stride and
    /// displacement becomes a large count; what stays `int` in the `_c` binding
    /// (`ndims`, `order`, the darray's process grid and distributions) stays an integer.
    fn move_to_large_counts(&mut self, kind: &Kind) {
        let ints = std::mem::take(&mut self.integers);
        let addrs = std::mem::take(&mut self.addresses);
        match kind {
            Kind::Named(_) | Kind::Dup(_) => {
                self.integers = ints;
                self.addresses = addrs;
            }
            Kind::Subarray { sizes, .. } => {
                // [ndims, sizes, subsizes, starts, order]
                let n = sizes.len();
                self.integers = vec![ints[0], ints[3 * n + 1]];
                self.large_counts = ints[1..=3 * n].to_vec();
            }
            Kind::Darray { gsizes, .. } => {
                // [size, rank, ndims, gsizes, distribs, dargs, psizes, order]
                let n = gsizes.len();
                self.large_counts = ints[3..3 + n].to_vec();
                self.integers = ints[..3].iter().chain(&ints[3 + n..]).copied().collect();
            }
            _ => {
                // Integers first, then addresses, in the constructor's argument order.
                self.large_counts = ints;
                self.large_counts.extend(addrs);
            }
        }
    }
}
