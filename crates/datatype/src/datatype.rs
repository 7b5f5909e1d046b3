//! The [`Datatype`] value: an immutable, cheaply cloned description of an MPI type
//! (how it was constructed, its layout) plus its compiled pack program once committed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::layout::Layout;
use crate::program::{self, Program};
use crate::Predefined;

/// Storage order of `MPI_Type_create_subarray` / `MPI_Type_create_darray`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// `MPI_ORDER_C`: the last dimension varies fastest.
    C,
    /// `MPI_ORDER_FORTRAN`: the first dimension varies fastest.
    Fortran,
}

impl Order {
    /// The value of the constant in MPICH's `mpi.h`.
    pub const fn mpich_value(self) -> i32 {
        match self {
            Order::C => crate::mpich::ORDER_C,
            Order::Fortran => crate::mpich::ORDER_FORTRAN,
        }
    }

    /// The order for an MPICH constant value, if it is one.
    pub const fn from_mpich(value: i32) -> Option<Order> {
        match value {
            crate::mpich::ORDER_C => Some(Order::C),
            crate::mpich::ORDER_FORTRAN => Some(Order::Fortran),
            _ => None,
        }
    }
}

/// Distribution of one dimension in `MPI_Type_create_darray`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// `MPI_DISTRIBUTE_BLOCK`.
    Block,
    /// `MPI_DISTRIBUTE_CYCLIC`.
    Cyclic,
    /// `MPI_DISTRIBUTE_NONE`.
    None,
}

impl Distribution {
    /// The value of the constant in MPICH's `mpi.h`.
    pub const fn mpich_value(self) -> i32 {
        match self {
            Distribution::Block => crate::mpich::DISTRIBUTE_BLOCK,
            Distribution::Cyclic => crate::mpich::DISTRIBUTE_CYCLIC,
            Distribution::None => crate::mpich::DISTRIBUTE_NONE,
        }
    }

    /// The distribution for an MPICH constant value, if it is one.
    pub const fn from_mpich(value: i32) -> Option<Distribution> {
        match value {
            crate::mpich::DISTRIBUTE_BLOCK => Some(Distribution::Block),
            crate::mpich::DISTRIBUTE_CYCLIC => Some(Distribution::Cyclic),
            crate::mpich::DISTRIBUTE_NONE => Some(Distribution::None),
            _ => None,
        }
    }
}

/// How a type was made: the constructor and its arguments, as
/// `MPI_Type_get_contents` returns them. Counts are the array lengths.
pub(crate) enum Kind {
    Named(Predefined),
    Dup(Datatype),
    Contiguous {
        count: i64,
        old: Datatype,
    },
    Vector {
        count: i64,
        blocklength: i64,
        stride: i64,
        old: Datatype,
    },
    Hvector {
        count: i64,
        blocklength: i64,
        stride: i64,
        old: Datatype,
    },
    Indexed {
        blocklengths: Box<[i64]>,
        displacements: Box<[i64]>,
        old: Datatype,
    },
    Hindexed {
        blocklengths: Box<[i64]>,
        displacements: Box<[i64]>,
        old: Datatype,
    },
    IndexedBlock {
        blocklength: i64,
        displacements: Box<[i64]>,
        old: Datatype,
    },
    HindexedBlock {
        blocklength: i64,
        displacements: Box<[i64]>,
        old: Datatype,
    },
    Struct {
        blocklengths: Box<[i64]>,
        displacements: Box<[i64]>,
        types: Box<[Datatype]>,
    },
    Resized {
        lb: i64,
        extent: i64,
        old: Datatype,
    },
    /// `expansion` is the equivalent type built from simpler constructors.
    Subarray {
        sizes: Box<[i64]>,
        subsizes: Box<[i64]>,
        starts: Box<[i64]>,
        order: Order,
        old: Datatype,
        expansion: Datatype,
    },
    Darray {
        size: i64,
        rank: i64,
        gsizes: Box<[i64]>,
        distribs: Box<[Distribution]>,
        dargs: Box<[i64]>,
        psizes: Box<[i64]>,
        order: Order,
        old: Datatype,
        expansion: Datatype,
    },
}

impl Kind {
    /// The component types this kind holds: the ones it was made of (`old`, a
    /// struct's members) and, for subarrays and darrays, the equivalent type built
    /// from simpler constructors.
    fn components(&self) -> (&[Datatype], Option<&Datatype>) {
        match self {
            Kind::Named(_) => (&[], None),
            Kind::Dup(old)
            | Kind::Contiguous { old, .. }
            | Kind::Vector { old, .. }
            | Kind::Hvector { old, .. }
            | Kind::Indexed { old, .. }
            | Kind::Hindexed { old, .. }
            | Kind::IndexedBlock { old, .. }
            | Kind::HindexedBlock { old, .. }
            | Kind::Resized { old, .. } => (std::slice::from_ref(old), None),
            Kind::Struct { types, .. } => (types, None),
            Kind::Subarray { old, expansion, .. } | Kind::Darray { old, expansion, .. } => {
                (std::slice::from_ref(old), Some(expansion))
            }
        }
    }

    /// The component types [`crate::program::compile`] takes the programs of, each
    /// pushed as not yet ready: the expansion where there is one.
    fn compile_inputs<'a>(&'a self, out: &mut Vec<(&'a Datatype, bool)>) {
        match self.components() {
            (_, Some(expansion)) => out.push((expansion, false)),
            (made_of, None) => out.extend(made_of.iter().map(|t| (t, false))),
        }
    }

    /// Hands every component type to `out` (leaving a placeholder), for iterative
    /// drop: `out` holds the last references to the components this kind owned alone.
    fn take_children(&mut self, out: &mut Vec<Datatype>) {
        let (made_of, expansion) = self.components();
        out.extend(made_of.iter().cloned());
        out.extend(expansion.cloned());
        *self = Kind::Named(Predefined::Byte);
    }
}

pub(crate) struct Inner {
    pub kind: Kind,
    pub layout: Layout,
    committed: AtomicBool,
    /// Made by a large-count (`_c`) constructor: its counts and displacements decode
    /// as `MPI_Count`s (`MPI_Type_get_contents_c`'s `array_of_large_counts`).
    large_counts: AtomicBool,
    /// Made by `MPI_Type_create_f90_*`: the combiner and its `(p, r)` (the kind is a
    /// `Dup` of the predefined type selected).
    pub f90: Option<crate::fortran::F90>,
    program: OnceLock<Arc<Program>>,
}

impl Drop for Inner {
    // Dropping a long chain of types (e.g. thousands of `MPI_Type_dup`s) recursively
    // could overflow the stack; unlink the chain with an explicit work list instead.
    fn drop(&mut self) {
        let mut pending = Vec::new();
        self.kind.take_children(&mut pending);
        while let Some(t) = pending.pop() {
            if let Some(mut inner) = Arc::into_inner(t.0) {
                inner.kind.take_children(&mut pending);
            }
        }
    }
}

/// An MPI datatype: predefined or derived, committed or not.
///
/// Cloning is cheap (a reference count) and clones are the same type object:
/// [`Datatype::ptr_eq`] tells them apart from equal-looking types. Types are
/// immutable apart from the commit flag, and safe to share between threads.
#[derive(Clone)]
pub struct Datatype(pub(crate) Arc<Inner>);

impl std::fmt::Debug for Datatype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Datatype")
            .field("combiner", &self.combiner())
            .field("size", &self.size())
            .field("lb", &self.lb())
            .field("extent", &self.extent())
            .finish()
    }
}

impl From<Predefined> for Datatype {
    fn from(p: Predefined) -> Datatype {
        Datatype::predefined(p)
    }
}

impl Datatype {
    pub(crate) fn new(kind: Kind, layout: Layout) -> Datatype {
        Datatype(Arc::new(Inner {
            kind,
            layout,
            committed: AtomicBool::new(false),
            large_counts: AtomicBool::new(false),
            f90: None,
            program: OnceLock::new(),
        }))
    }

    /// The type `MPI_Type_create_f90_*` returns: `base` (already selected for the
    /// arguments) under the F90 combiner, decoding to `f90`'s parameters.
    pub(crate) fn new_f90(f90: crate::fortran::F90, base: Predefined) -> Datatype {
        let base = Datatype::predefined(base);
        let t = Datatype(Arc::new(Inner {
            layout: base.layout().clone(),
            kind: Kind::Dup(base),
            committed: AtomicBool::new(true),
            large_counts: AtomicBool::new(false),
            f90: Some(f90),
            program: OnceLock::new(),
        }));
        t.commit();
        t
    }

    /// A predefined type (already committed).
    pub fn predefined(p: Predefined) -> Datatype {
        let t = Datatype::new(Kind::Named(p), Layout::named(p));
        t.commit();
        t
    }

    pub(crate) fn kind(&self) -> &Kind {
        &self.0.kind
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.0.layout
    }

    /// The predefined type this is, if it is one (a dup of one is not).
    pub fn as_predefined(&self) -> Option<Predefined> {
        match self.kind() {
            Kind::Named(p) => Some(*p),
            _ => None,
        }
    }

    /// True when both values are the same type object.
    pub fn ptr_eq(a: &Datatype, b: &Datatype) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// `MPI_Type_size`: data bytes of one element.
    pub fn size(&self) -> usize {
        self.layout().size as usize
    }

    /// Lower bound (`MPI_Type_get_extent`).
    pub fn lb(&self) -> isize {
        self.layout().lb() as isize
    }

    /// Upper bound: `lb + extent`.
    pub fn ub(&self) -> isize {
        self.layout().ub() as isize
    }

    /// Extent (`MPI_Type_get_extent`); negative extents are possible with `resized`.
    pub fn extent(&self) -> isize {
        self.layout().extent() as isize
    }

    /// True lower bound (`MPI_Type_get_true_extent`): the lowest data byte, 0 without data.
    pub fn true_lb(&self) -> isize {
        self.layout().true_lb() as isize
    }

    /// One past the highest data byte, 0 without data.
    pub fn true_ub(&self) -> isize {
        self.layout().true_ub() as isize
    }

    /// True extent (`MPI_Type_get_true_extent`).
    pub fn true_extent(&self) -> isize {
        (self.layout().true_ub() - self.layout().true_lb()) as isize
    }

    /// Largest alignment of the basic types inside (used to pad struct extents).
    pub fn alignment(&self) -> usize {
        self.layout().align as usize
    }

    /// Number of basic elements in one element (`MPI_Get_elements` counts these; the
    /// pair types such as `MPI_DOUBLE_INT` count two).
    pub fn element_count(&self) -> u64 {
        self.layout().elements as u64
    }

    /// The predefined type every data element is made of, when there is exactly one
    /// (e.g. `MPI_INT` for a vector of ints, `MPI_DOUBLE_INT` for an array of pairs):
    /// what a predefined reduction operation computes on. `None` for mixed or empty types.
    pub fn basic_type(&self) -> Option<Predefined> {
        match self.layout().basic {
            crate::layout::Basic::One(p) => Some(p),
            _ => None,
        }
    }

    /// True when the type map has an explicit lower-bound marker (`MPI_LB`, `resized`).
    pub fn has_explicit_lb(&self) -> bool {
        self.layout().slb.is_some()
    }

    /// True when the type map has an explicit upper-bound marker (`MPI_UB`, `resized`).
    pub fn has_explicit_ub(&self) -> bool {
        self.layout().sub.is_some()
    }

    /// Constructor nesting depth (0 for predefined types; dups add nothing).
    pub fn depth(&self) -> usize {
        self.layout().depth
    }

    /// `MPI_Type_commit`: compiles the pack program (idempotent, thread-safe).
    pub fn commit(&self) {
        self.program();
        self.0.committed.store(true, Ordering::Release);
    }

    /// Whether [`commit`](Self::commit) was called (predefined types always are; a dup
    /// of a committed type is).
    pub fn is_committed(&self) -> bool {
        self.0.committed.load(Ordering::Acquire)
    }

    /// Records that a large-count (`_c`) constructor made this type, so that decoding
    /// returns its counts as large counts. Set once, right after construction.
    pub fn mark_large_counts(&self) {
        if self.as_predefined().is_none() {
            self.0.large_counts.store(true, Ordering::Release);
        }
    }

    /// Whether a large-count constructor made this type (see [`Self::mark_large_counts`]).
    pub fn has_large_counts(&self) -> bool {
        self.0.large_counts.load(Ordering::Acquire)
    }

    /// `MPI_Type_dup`: a new type object with the same type map and commit state.
    pub fn dup(&self) -> Datatype {
        let t = Datatype::new(Kind::Dup(self.clone()), self.layout().clone());
        if let Some(p) = self.0.program.get() {
            let _ = t.0.program.set(p.clone());
        }
        if self.is_committed() {
            t.0.committed.store(true, Ordering::Release);
        }
        t
    }

    /// The compiled program, compiling on first use (also for uncommitted types, so that
    /// pack/unpack of an uncommitted type is well defined rather than a crash).
    pub(crate) fn program(&self) -> &Program {
        if let Some(p) = self.0.program.get() {
            return p;
        }
        self.compile_components();
        self.0
            .program
            .get_or_init(|| Arc::new(program::compile(self)))
    }

    /// Compiles the types this one's program is built from, deepest first and with an
    /// explicit work list: compiling a type compiles its components on demand, which for
    /// a type nested [`crate::MAX_DEPTH`] deep would nest that many compiles on the stack.
    fn compile_components(&self) {
        let mut work: Vec<(&Datatype, bool)> = Vec::new();
        self.resolve().0.kind.compile_inputs(&mut work);
        while let Some((t, ready)) = work.pop() {
            if t.0.program.get().is_some() {
                continue;
            }
            if ready {
                t.0.program.get_or_init(|| Arc::new(program::compile(t)));
                continue;
            }
            work.push((t, true));
            t.resolve().0.kind.compile_inputs(&mut work);
        }
    }

    /// Follows `Dup` links to the type that was actually constructed.
    pub(crate) fn resolve(&self) -> &Datatype {
        let mut t = self;
        while let Kind::Dup(old) = t.kind() {
            t = old;
        }
        t
    }
}
