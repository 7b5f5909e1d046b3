! MPI_Waitany, MPI_Testany and MPI_Waitsome on requests that are all null: the index is
! MPI_UNDEFINED (outcount for MPI_Waitsome), not MPI_UNDEFINED + 1.
! Strict: MPICH 4.0.2's Fortran binding adds 1 to MPI_UNDEFINED (returns -32765).
program waitany_strict
  use mpi
  use testutil
  implicit none
  integer :: ierr, rank, idx, outcount, reqs(3), indices(3)
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 3)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  reqs = MPI_REQUEST_NULL
  call MPI_Waitany(3, reqs, idx, status, ierr)
  if (idx /= MPI_UNDEFINED) then
    print *, 'MPI_Waitany index ', idx
    errs = errs + 1
  end if
  flag = .false.
  call MPI_Testany(3, reqs, idx, flag, status, ierr)
  if (idx /= MPI_UNDEFINED .or. .not. flag) then
    print *, 'MPI_Testany index ', idx, flag
    errs = errs + 1
  end if
  call MPI_Waitsome(3, reqs, outcount, indices, statuses, ierr)
  if (outcount /= MPI_UNDEFINED) then
    print *, 'MPI_Waitsome outcount ', outcount
    errs = errs + 1
  end if
  call report()
  call MPI_Finalize(ierr)
end program waitany_strict
