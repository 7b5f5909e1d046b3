! mpif.h (fixed form) one-sided communication: a window on a local
! array, MPI_PUT between fences. _strict: with MPICH 4.0.2's own
! library the put does not reach the window (the same program through
! the mpi module, rma.f90, passes there); MPICH-built, it passes on
! oxmpi (tests/fortran/run --abi).
      PROGRAM RMA77
      USE TESTUTIL
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, NEXT, PREV
      INTEGER WIN, ISZ, BUF(2), SRC
      INTEGER(KIND=MPI_ADDRESS_KIND) WSIZE, DISP
! The window's memory changes behind the compiler's back.
      VOLATILE BUF

      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      NEXT = MOD(RANK + 1, NPROCS)
      PREV = MOD(RANK + NPROCS - 1, NPROCS)
      CALL MPI_TYPE_SIZE(MPI_INTEGER, ISZ, IERR)
      BUF(1) = -1
      BUF(2) = -1
      WSIZE = 2 * ISZ
      CALL MPI_WIN_CREATE(BUF, WSIZE, ISZ, MPI_INFO_NULL,
     &     MPI_COMM_WORLD, WIN, IERR)
      CALL MPI_WIN_FENCE(0, WIN, IERR)
      SRC = RANK + 20
      DISP = 1
      CALL MPI_PUT(SRC, 1, MPI_INTEGER, NEXT, DISP, 1, MPI_INTEGER,
     &     WIN, IERR)
      CALL MPI_WIN_FENCE(0, WIN, IERR)
      IF (BUF(1) .NE. -1 .OR. BUF(2) .NE. PREV + 20) CALL FAIL('PUT')
      CALL MPI_WIN_FREE(WIN, IERR)

      CALL REPORT()
      CALL MPI_FINALIZE(IERR)
      END PROGRAM RMA77
