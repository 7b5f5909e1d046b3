! Handle and status conversion between Fortran and C (c2f_c.c holds the C half):
! Fortran hands C its communicator, datatype, operation, group and a status; C converts
! them with MPI_Xxx_f2c / MPI_Status_f2c, uses them, and hands back a communicator it
! created (MPI_Comm_c2f) and a status (MPI_Status_c2f) that Fortran then uses; and
! Fortran's MPI_STATUS(ES)_IGNORE are C's MPI_F_STATUS(ES)_IGNORE.
program c2f
  use mpi
  use testutil
  implicit none
  interface
    subroutine c_check(comm, dtype, op, group, status, newcomm, cstatus, errs) bind(C, name='c_check')
      integer :: comm, dtype, op, group, status(*), newcomm, cstatus(*), errs
    end subroutine c_check
    subroutine c_ignores(status, statuses, errs) bind(C, name='c_ignores')
      integer :: status(*), statuses(*), errs
    end subroutine c_ignores
  end interface
  integer :: ierr, rank, nprocs, grp, newcomm, nsize, x, y
  integer :: status(MPI_STATUS_SIZE), cstatus(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, grp, ierr)
  x = rank
  call MPI_Sendrecv(x, 1, MPI_INTEGER, rank, 7, y, 1, MPI_INTEGER, rank, 7, MPI_COMM_WORLD, status, ierr)
  call c_check(MPI_COMM_WORLD, MPI_DOUBLE_PRECISION, MPI_MAXLOC, grp, status, newcomm, cstatus, errs)
  call MPI_Comm_size(newcomm, nsize, ierr)
  call check(nsize == nprocs, 'a communicator from C')
  call check(cstatus(MPI_SOURCE) == 3 .and. cstatus(MPI_TAG) == 4 .and. cstatus(MPI_ERROR) == 5, &
             'a status from C')
  call MPI_Comm_free(newcomm, ierr)
  call MPI_Group_free(grp, ierr)
  ! C sees Fortran's MPI_STATUS(ES)_IGNORE as MPI_F_STATUS(ES)_IGNORE.
  call c_ignores(MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, errs)

  call report()
  call MPI_Finalize(ierr)
end program c2f
